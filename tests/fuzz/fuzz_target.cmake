# orchestrate_fuzz_target(<name> <libraries>...): the executable fuzz_<name>
# from <name>.cpp (which defines LLVMFuzzerTestOneInput), linked with
# libFuzzer and the given parsing libraries, plus a test that replays its
# seed corpus (corpus/<name>/) and every input a fuzzer has found
# (regressions/<name>/) once each: a finding, once committed there, can
# never come back unnoticed.
function(orchestrate_fuzz_target name)
  add_executable(fuzz_${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.cpp)
  target_include_directories(fuzz_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(fuzz_${name} PRIVATE ${ARGN})
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  set(inputs "")
  foreach(kind corpus regressions)
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${kind}/${name})
      list(APPEND inputs ${CMAKE_CURRENT_SOURCE_DIR}/${kind}/${name})
    endif()
  endforeach()
  if(inputs)
    # -runs=0: execute the inputs given, mutate nothing.
    add_test(NAME fuzz_replay.${name} COMMAND fuzz_${name} -runs=0 ${inputs})
  endif()
  set(ORCHESTRATE_FUZZ_TARGETS ${ORCHESTRATE_FUZZ_TARGETS} ${name} PARENT_SCOPE)
endfunction()

# orchestrate_sanitized_test(<name> <test source> <libraries>...): a parsing
# library's own unit test (GoogleTest, torch-free) built here with the same
# sanitizers, so CI runs it under ASan and UBSan too.
function(orchestrate_sanitized_test name source)
  add_executable(sanitized_${name} ${source})
  # The test helpers as the main build's tests include them (orchestrate/testing/...).
  target_include_directories(sanitized_${name} PRIVATE ${CMAKE_BINARY_DIR}/sdk_include)
  target_link_libraries(sanitized_${name} PRIVATE ${ARGN} GTest::gtest_main)
  add_test(NAME sanitized.${name} COMMAND sanitized_${name})
endfunction()
