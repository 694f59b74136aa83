# `cpack` in a build folder (cd build/release && cpack) makes the Debian packages, one per
# install component (cmake/ArbiterInstall.cmake), for /usr:
#
#   arbiter          the runtime: `arbiter` (stripped), libarbiter-host.so, the plugin
#                    runner, the bundled plugins, the samples, the man page and docs, the
#                    systemd unit arbiter.service and /etc/arbiter/server_config.toml (a
#                    conffile); its Depends are read from the binaries by dpkg-shlibdeps.
#   arbiter-dev      headers, static host libraries, the CMake package, arbiter-sdk.pc,
#                    the event schema and share/arbiter/examples; Depends on arbiter of
#                    the same version and the -dev packages the SDK's headers and the
#                    host's libraries need.
#   arbiter-dbgsym   the debug information split off the runtime's binaries
#                    (usr/lib/debug/.build-id/xx/yyyy.debug, found by gdb from the build
#                    ID; a .ddeb, which dpkg -i installs like a .deb).
#
# tests/packaging/deb_packages.sh makes them, installs them into an empty root and checks
# them. Nothing here changes the build: CPack reads the install rules alone.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME arbiter)
set(CPACK_PACKAGE_VENDOR "Arbiter developers")
set(CPACK_PACKAGE_CONTACT "Arbiter developers <arbiter@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Scripts and conffiles keep the modes dpkg expects (0755, 0644) whatever the checkout's.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Each package's summary is the first line of its own description below. CPackDeb puts
# the project's summary before every package's description unless it is CPack's default
# one, so it is set to that.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")

# Where the package puts things, for the files below that name them: the prefix, and
# /etc for it when the prefix is /usr (the pre-build script moves usr/etc there).
set(ARBITER_PACKAGE_BIN_DIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR})
set(ARBITER_PACKAGE_DOC_DIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${ARBITER_INSTALL_DOC_DIR})
if(CPACK_PACKAGING_INSTALL_PREFIX STREQUAL "/usr")
  set(ARBITER_PACKAGE_CONF_DIR /etc/arbiter)
else()
  set(ARBITER_PACKAGE_CONF_DIR ${CPACK_PACKAGING_INSTALL_PREFIX}/etc/arbiter)
endif()

# The runtime package: the server as a systemd service with its default config. These two
# are installed by the component's install alone (EXCLUDE_FROM_ALL): `cmake --install`
# into a prefix of one's own gets neither a unit naming /usr/bin nor an etc/ folder.
set(ARBITER_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)
configure_file(${ARBITER_PACKAGING_DIR}/arbiter.service.in ${CMAKE_BINARY_DIR}/packaging/arbiter.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/arbiter.service DESTINATION lib/systemd/system
  COMPONENT runtime EXCLUDE_FROM_ALL)
install(FILES ${ARBITER_PACKAGING_DIR}/server_config.toml DESTINATION etc/arbiter
  COMPONENT runtime EXCLUDE_FROM_ALL)
file(WRITE ${CMAKE_BINARY_DIR}/packaging/conffiles "${ARBITER_PACKAGE_CONF_DIR}/server_config.toml\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME arbiter)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION net)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "arbiter-dev")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${CMAKE_BINARY_DIR}/packaging/conffiles
  ${ARBITER_PACKAGING_DIR}/debian/postinst
  ${ARBITER_PACKAGING_DIR}/debian/prerm
  ${ARBITER_PACKAGING_DIR}/debian/postrm
  ${ARBITER_PACKAGING_DIR}/debian/triggers)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "server-side anti-cheat analyzer host
Arbiter is a server-side anti-cheat analyzer host for game relay servers. The relay hands
it a stream of events; Arbiter loads analyzer plugins at run time, passes them the events
through a stable C ABI, collects the suspicion signals they return and combines them into
one assessment per player. Plugins report; they never act on a player.
This package has the arbiter command (replay, evaluate, serve, review, ...), the bundled
plugins and their confined runner, libarbiter-host.so for relays that embed the host,
the sample match, the man page and the documentation, and the systemd unit
arbiter.service (not enabled) with its config /etc/arbiter/server_config.toml.")

# The dev package: building plugins and relays against the SDK. Its headers include
# FlatBuffers' and xxHash's; the host's static libraries (ArbiterSDK::host) need the rest.
# The event headers flatc generated check FlatBuffers' exact version, so it is pinned to
# the release this build generated them with.
set(_arbiter_flatbuffers_dev libflatbuffers-dev)
if(FlatBuffers_VERSION MATCHES "^([0-9]+)\\.([0-9]+)\\.([0-9]+)")
  math(EXPR _arbiter_next_patch "${CMAKE_MATCH_3} + 1")
  set(_arbiter_flatbuffers_dev "libflatbuffers-dev (>= ${FlatBuffers_VERSION}), libflatbuffers-dev (<< ${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${_arbiter_next_patch})")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_NAME arbiter-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "arbiter (= ${PROJECT_VERSION}), ${_arbiter_flatbuffers_dev}, libxxhash-dev, libboost-dev (>= 1.74), libspdlog-dev, libfmt-dev, libtomlplusplus-dev, nlohmann-json3-dev, zlib1g-dev, libsodium-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "cmake (>= 3.25), g++ (>= 4:12), pkg-config, libgtest-dev")
# The Python relay example generates its batch code with flatc at each run.
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "python3, python3-flatbuffers, flatbuffers-compiler")
set(CPACK_DEBIAN_DEV_DESCRIPTION "server-side anti-cheat analyzer host - development files
The SDK for Arbiter analyzer plugins and for relays that embed the host: the C ABI and
the header-only C++ SDK, the event headers and schema, the host's static libraries (for
PluginHarness tests and embedding in C++), the CMake package (find_package(ArbiterSDK))
and arbiter-sdk.pc. Examples to copy in /usr/share/arbiter/examples: a plugin template,
and relays in C and in Python.")

# The debug information of the runtime's binaries, split off by CPack (objcopy
# --only-keep-debug, then --strip-unneeded and a debug link on the binary).
set(CPACK_DEBIAN_RUNTIME_DEBUGINFO_PACKAGE ON)

# After the install into the staging folder, before the packages are made.
configure_file(${CMAKE_CURRENT_LIST_DIR}/ArbiterPackagePreBuild.cmake.in
  ${CMAKE_BINARY_DIR}/packaging/ArbiterPackagePreBuild.cmake @ONLY)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_BINARY_DIR}/packaging/ArbiterPackagePreBuild.cmake)

include(CPack)
