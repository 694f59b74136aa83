// Compiled by the test sdk.names_a_flatbuffers_release_mismatch with another FlatBuffers
// first on the include path: the SDK must stop the build with a message that says why.
#include <arbiter/sdk.hpp>
