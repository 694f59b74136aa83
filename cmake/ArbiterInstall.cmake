# The installed SDK: `find_package(ArbiterSDK)` gives ArbiterSDK::sdk (what a plugin
# builds against), ArbiterSDK::host (the host library: embedding and PluginHarness) and
# arbiter_add_plugin(); a pkg-config file serves builds without CMake.
include(CMakePackageConfigHelpers)

# Two export sets, one per component: a plugin-only build (COMPONENTS sdk) reads the
# first alone, and so needs none of the host's dependencies.
install(EXPORT ArbiterSDKTargets NAMESPACE ArbiterSDK:: DESTINATION lib/cmake/ArbiterSDK)
install(EXPORT ArbiterSDKHostTargets NAMESPACE ArbiterSDK:: DESTINATION lib/cmake/ArbiterSDK)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ArbiterSDKConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ArbiterSDKConfig.cmake INSTALL_DESTINATION lib/cmake/ArbiterSDK)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ArbiterSDKConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ArbiterSDKConfig.cmake ${CMAKE_BINARY_DIR}/ArbiterSDKConfigVersion.cmake
  DESTINATION lib/cmake/ArbiterSDK)

# For people at a shell: `man arbiter` and tab completion.
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/arbiter.1 DESTINATION share/man/man1)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/completion/arbiter.bash
  DESTINATION share/bash-completion/completions RENAME arbiter)

configure_file(${CMAKE_CURRENT_LIST_DIR}/arbiter-sdk.pc.in ${CMAKE_BINARY_DIR}/arbiter-sdk.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/arbiter-sdk.pc DESTINATION lib/pkgconfig)
