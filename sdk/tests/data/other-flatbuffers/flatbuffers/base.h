// Stands in for a plugin author's own, newer FlatBuffers ahead of the SDK's on the
// include path: only its version macros matter to the test.
#pragma once
#define FLATBUFFERS_VERSION_MAJOR 23
#define FLATBUFFERS_VERSION_MINOR 5
#define FLATBUFFERS_VERSION_REVISION 26
