# What `cmake --install` puts where, by component (the top CMakeLists.txt sets the
# folders: GNUInstallDirs, with the libraries in lib/<multiarch triplet>):
#
#   runtime  bin/arbiter; lib/arbiter/ (the plugin runner, the bundled plugins, the DDNet
#            antibot module); <libdir>/libarbiter-host.so; share/arbiter/samples and the
#            Luanti mod; the man page, bash completion and share/doc/arbiter.
#   dev      the headers, the static host libraries, the CMake package, arbiter-sdk.pc,
#            share/arbiter/schema and share/arbiter/examples.
#
# A plain install takes both. The systemd unit and /etc/arbiter/server_config.toml are the
# Debian package's alone (cmake/ArbiterPackage.cmake): their paths are the package's.
#
# The installed SDK: `find_package(ArbiterSDK)` gives ArbiterSDK::sdk (what a plugin
# builds against), ArbiterSDK::host (the host library: embedding and PluginHarness) and
# arbiter_add_plugin(); a pkg-config file serves builds without CMake.
include(CMakePackageConfigHelpers)

# Two export sets, one per component: a plugin-only build (COMPONENTS sdk) reads the
# first alone, and so needs none of the host's dependencies.
install(EXPORT ArbiterSDKTargets NAMESPACE ArbiterSDK:: DESTINATION ${ARBITER_INSTALL_CMAKE_DIR}
  COMPONENT dev)
install(EXPORT ArbiterSDKHostTargets NAMESPACE ArbiterSDK:: DESTINATION ${ARBITER_INSTALL_CMAKE_DIR}
  COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ArbiterSDKConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ArbiterSDKConfig.cmake INSTALL_DESTINATION ${ARBITER_INSTALL_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ArbiterSDKConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ArbiterSDKConfig.cmake ${CMAKE_BINARY_DIR}/ArbiterSDKConfigVersion.cmake
  DESTINATION ${ARBITER_INSTALL_CMAKE_DIR} COMPONENT dev)

# The pkg-config file finds the prefix from its own place, <prefix>/<libdir>/pkgconfig:
# as many `..` as that folder is deep.
file(RELATIVE_PATH ARBITER_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" ARBITER_PC_TO_PREFIX "${ARBITER_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/arbiter-sdk.pc.in ${CMAKE_BINARY_DIR}/arbiter-sdk.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/arbiter-sdk.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT dev)

# libarbiter-host.so looks for the bundled plugins (and the runner) in <its folder>/arbiter;
# `arbiter` in <bin>/../lib/arbiter. With the library in lib/<triplet>, a link
# lib/<triplet>/arbiter -> ../arbiter serves both from one folder.
if(NOT CMAKE_INSTALL_LIBDIR STREQUAL ARBITER_INSTALL_PRIVATE_DIR AND
   NOT CMAKE_INSTALL_LIBDIR STREQUAL "lib" AND NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  file(RELATIVE_PATH ARBITER_PRIVATE_DIR_LINK /prefix/${CMAKE_INSTALL_LIBDIR}
       /prefix/${ARBITER_INSTALL_PRIVATE_DIR})
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/install-links)
  file(CREATE_LINK ${ARBITER_PRIVATE_DIR_LINK} ${CMAKE_BINARY_DIR}/install-links/arbiter SYMBOLIC)
  install(FILES ${CMAKE_BINARY_DIR}/install-links/arbiter DESTINATION ${CMAKE_INSTALL_LIBDIR}
    COMPONENT runtime)
endif()

# For people at a shell: `man arbiter`, tab completion, and the documentation the man page
# points to (share/doc/arbiter: README.md, ARCHITECTURE.md and docs/, as in the source
# tree, so that their links between each other hold).
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/arbiter.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/completion/arbiter.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME arbiter COMPONENT runtime)
set(ARBITER_INSTALL_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/arbiter)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/ARCHITECTURE.md
  DESTINATION ${ARBITER_INSTALL_DOC_DIR} COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${ARBITER_INSTALL_DOC_DIR}/docs
  COMPONENT runtime PATTERN man EXCLUDE)

# The examples, for authors to copy: the plugin template (docs/writing-a-plugin.md) and
# the relays that embed the host in C and in Python. Only what builds outside this tree:
# the relays' CMakeLists.txt are this tree's tests.
set(ARBITER_INSTALL_EXAMPLES_DIR ${CMAKE_INSTALL_DATADIR}/arbiter/examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/plugin-template
  DESTINATION ${ARBITER_INSTALL_EXAMPLES_DIR} COMPONENT dev
  PATTERN build EXCLUDE PATTERN "build-*" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/examples/c-relay/relay.c ${PROJECT_SOURCE_DIR}/examples/c-relay/README.md
  DESTINATION ${ARBITER_INSTALL_EXAMPLES_DIR}/c-relay COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/examples/python-relay/README.md
  DESTINATION ${ARBITER_INSTALL_EXAMPLES_DIR}/python-relay COMPONENT dev)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/examples/python-relay/relay.py
  DESTINATION ${ARBITER_INSTALL_EXAMPLES_DIR}/python-relay COMPONENT dev)
