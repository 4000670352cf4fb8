# cmake -P driver of the install test (tests/install/CMakeLists.txt passes the
# UFQ_* variables). Every step prints the command it runs; the first failure
# stops the test with that step's output.
cmake_minimum_required(VERSION 3.25)

set(prefix ${UFQ_WORK_DIR}/prefix)
file(REMOVE_RECURSE ${UFQ_WORK_DIR})
file(MAKE_DIRECTORY ${prefix})

# run(<what> <command>...): runs the command, fails the test if it fails.
function(run what)
  list(JOIN ARGN " " shown)
  message(STATUS "${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# 1. Install into the empty prefix.
run("install" ${CMAKE_COMMAND} --install ${UFQ_BUILD_DIR} --prefix ${prefix})

# 2. What must (not) be there.
foreach(f include/ufq/scheduler.hpp include/ufq/tc/fq_options.hpp lib/cmake/ufq/ufqConfig.cmake
          lib/cmake/ufq/ufqConfigVersion.cmake lib/pkgconfig/ufq.pc share/doc/ufq/LICENSE)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
foreach(f include/ufq/reference include/ufq/sim/simulation_reference.hpp)
  if(EXISTS ${prefix}/${f})
    message(FATAL_ERROR "installed but internal (tests and tools only): ${f}")
  endif()
endforeach()
# The public headers (the core's, the runtime's, the simulator's): the C++
# standard library and Linux only, no third-party header.
file(GLOB core_headers ${prefix}/include/ufq/*.hpp ${prefix}/include/ufq/driver/*.hpp
                       ${prefix}/include/ufq/tc/*.hpp ${prefix}/include/ufq/rt/*.hpp
                       ${prefix}/include/ufq/sim/*.hpp)
foreach(h IN LISTS core_headers)
  file(STRINGS ${h} bad REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](boost|nlohmann|fmt|CLI|pcap|gtest|gmock|benchmark)[/.]")
  if(bad)
    message(FATAL_ERROR "${h} includes a third-party header: ${bad}")
  endif()
endforeach()
if(UFQ_HAVE_TOOLS)
  run("ufq --version" ${prefix}/bin/ufq --version)
  if(NOT run_output STREQUAL "ufq ${UFQ_VERSION}\n")
    message(FATAL_ERROR "ufq --version printed \"${run_output}\", expected \"ufq ${UFQ_VERSION}\"")
  endif()
  if(NOT EXISTS ${prefix}/share/man/man1/ufq.1)
    message(FATAL_ERROR "not installed: share/man/man1/ufq.1")
  endif()
  if(UFQ_HAVE_RUN)
    # `ufq run` finds the installed preload library next to itself.
    file(GLOB preload ${prefix}/lib*/ufq/libufq_preload.so)
    if(NOT preload)
      message(FATAL_ERROR "not installed: lib/ufq/libufq_preload.so")
    endif()
    run("ufq run" ${prefix}/bin/ufq run -q -- /usr/bin/env)
    if(NOT run_output MATCHES "\nLD_PRELOAD=${prefix}/lib[^/]*/ufq/libufq_preload.so\n")
      message(FATAL_ERROR "ufq run did not preload the installed library:\n${run_output}")
    endif()
  endif()
endif()

# 3. CMake projects outside the tree, finding ufq in the prefix only.
set(cmake_args -G ${UFQ_GENERATOR} -DCMAKE_CXX_COMPILER=${UFQ_CXX}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    "-DCMAKE_CXX_FLAGS=${UFQ_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${UFQ_LINK_FLAGS}")
if(UFQ_CXX_LAUNCHER)
  list(APPEND cmake_args -DCMAKE_CXX_COMPILER_LAUNCHER=${UFQ_CXX_LAUNCHER})
endif()
# project(<name> <source>): configure, build, run its tests.
function(project_against_prefix name source)
  set(bin ${UFQ_WORK_DIR}/${name})
  run("${name}: configure" ${CMAKE_COMMAND} -S ${source} -B ${bin} ${cmake_args})
  file(STRINGS ${bin}/CMakeCache.txt ufq_dir REGEX "^ufq_DIR:")
  if(NOT ufq_dir MATCHES "=${prefix}/")
    message(FATAL_ERROR "${name} found ufq elsewhere than in the prefix: ${ufq_dir}")
  endif()
  run("${name}: build" ${CMAKE_COMMAND} --build ${bin} --parallel 2)
  run("${name}: run" ${CMAKE_CTEST_COMMAND} --test-dir ${bin} --output-on-failure --no-tests=error)
  message(STATUS "${name}: ${run_output}")
endfunction()
project_against_prefix(examples ${UFQ_SOURCE_DIR}/examples)
project_against_prefix(consumer ${UFQ_SOURCE_DIR}/tests/install/consumer)

# 4. One-file programs over pkg-config, the way a Makefile would build them.
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
separate_arguments(cxx_flags UNIX_COMMAND "${UFQ_CXX_FLAGS} ${UFQ_LINK_FLAGS}")
# pkg_config_program(<module> <source>): build with the module's flags, run.
function(pkg_config_program module source)
  run("pkg-config ${module}" ${UFQ_PKG_CONFIG} --cflags --libs ${module})
  separate_arguments(pc_flags UNIX_COMMAND "${run_output}")
  get_filename_component(exe ${source} NAME_WE)
  set(exe ${UFQ_WORK_DIR}/${exe})
  run("${module}: build" ${UFQ_CXX_LAUNCHER} ${UFQ_CXX} -std=c++20 ${cxx_flags} ${source} ${pc_flags} -o ${exe})
  run("${module}: run" ${exe})
  message(STATUS "${module}: ${run_output}")
endfunction()
pkg_config_program(ufq ${UFQ_SOURCE_DIR}/tests/install/pkgconfig_core.cpp)
if(EXISTS ${prefix}/lib/pkgconfig/ufq-rt.pc)
  pkg_config_program(ufq-rt ${UFQ_SOURCE_DIR}/tests/install/pkgconfig_rt.cpp)
endif()
if(EXISTS ${prefix}/lib/pkgconfig/ufq-sim.pc)
  run("pkg-config ufq-sim" ${UFQ_PKG_CONFIG} --print-errors --cflags --libs ufq-sim)
endif()
message(STATUS "install test passed (prefix ${prefix})")
