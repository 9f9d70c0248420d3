# orchestrate_add_plugin(<name> SOURCES <file>... [TESTS <file>...] [LINK_LIBRARIES <lib>...])
#
# Builds a plugin as a loadable module named liborchestrate_<name>.so against
# the orchestrate SDK and LibTorch, linked with --no-undefined. The built-in
# plugins use exactly this function; third parties get it from
# find_package(orchestrate).
#
# The sources are compiled once into an object library; the module and, when
# TESTS are given, a GoogleTest executable <name>_plugin_test are linked from
# it, so the same plugin code is tested linked in statically.
function(orchestrate_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;TESTS;LINK_LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "orchestrate_add_plugin(${name}): SOURCES is required")
  endif()
  set(target orchestrate_plugin_${name})

  add_library(${target}_objects OBJECT ${ARG_SOURCES})
  target_link_libraries(${target}_objects PUBLIC orchestrate::sdk ${ARG_LINK_LIBRARIES})
  set_target_properties(${target}_objects PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # Inside this project, LibTorch's precompiled header (core/pch); a third
  # party's plugin compiles without it.
  if(COMMAND orchestrate_use_torch_pch)
    orchestrate_use_torch_pch(${target}_objects)
  endif()

  add_library(${target} MODULE)
  target_link_libraries(${target} PRIVATE ${target}_objects)
  # Every symbol resolved at link time, against the SDK and LibTorch: a
  # missing library or a mismatched build fails the build here, not dlopen
  # on the user's machine.
  target_link_options(${target} PRIVATE LINKER:--no-undefined)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME orchestrate_${name})
  if(DEFINED ORCHESTRATE_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ORCHESTRATE_PLUGIN_OUTPUT_DIR})
  endif()
  if(DEFINED ORCHESTRATE_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${ORCHESTRATE_PLUGIN_INSTALL_DIR})
  endif()
  set_property(GLOBAL APPEND PROPERTY ORCHESTRATE_PLUGIN_TARGETS ${target})

  if(ARG_TESTS)
    find_package(GTest REQUIRED)
    include(GoogleTest)
    add_executable(${name}_plugin_test ${ARG_TESTS})
    target_link_libraries(${name}_plugin_test PRIVATE ${target}_objects GTest::gtest_main)
    if(TARGET orchestrate::test_support)
      target_link_libraries(${name}_plugin_test PRIVATE orchestrate::test_support)
    endif()
    # In orchestrate's own build: -O0 and the tests' precompiled header (core/pch).
    if(COMMAND orchestrate_test_build)
      orchestrate_test_build(${name}_plugin_test WITH_TORCH)
    endif()
    gtest_discover_tests(${name}_plugin_test DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
