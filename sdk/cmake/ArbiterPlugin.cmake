# arbiter_add_plugin(<target> SOURCES <src>... [OUTPUT_NAME <name>] [OUTPUT_DIRECTORY <dir>])
#
# Builds an analyzer plugin the way docs/abi-rules.md, rule 14, asks: a MODULE library with
# hidden visibility, no GNU unique symbols (they would keep it loaded forever), no
# undefined symbols, and a version script that exports the entry symbol alone. The
# file is named arbiter-<name>.so.

function(arbiter_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME;OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  set(version_script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/arbiter_plugin.map)
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "arbiter_add_plugin(${target}): SOURCES is required")
  endif()
  if(NOT ARG_OUTPUT_NAME)
    set(ARG_OUTPUT_NAME ${target})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ArbiterSDK::sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "arbiter-${ARG_OUTPUT_NAME}"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${version_script})
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
  # GCC only: clang never emits GNU unique symbols, and refuses the flag.
  target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
  # --no-undefined-version: the version script names arbiter_plugin_entry, so a plugin
  # whose sources lack the ARBITER_PLUGIN(AnalyzerClass) line stops at the link instead
  # of building a library the host can only refuse. GNU ld, gold, lld and mold all take it.
  target_link_options(${target} PRIVATE
    -Wl,--no-undefined
    -Wl,--no-undefined-version
    -Wl,--version-script=${version_script})
endfunction()
