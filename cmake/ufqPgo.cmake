# UFQ_PGO: the scheduler, the simulator and the `ufq` command compiled with a
# profile of the simulator's main job (GCC's profile-guided optimisation), and
# the command linked with link-time optimisation over them.
#
# How: an instrumented copy of the `ufq` command is built from this source
# tree under <build>/pgo/build (tests, runtime and benchmarks off), the
# training runs it on the main job (docs/simulator.md, "Speed": the profile
# build), and the targets passed to ufq_pgo_use() are compiled against the
# counts it wrote. The instrumented build and the training re-run when a
# source changes, so the profile always matches the sources it is used on.
#
# Why a profile: the simulator's hot path is branchy code spread over the
# scheduler and the event models; the profile lets the compiler lay out the
# taken paths and inline across the models where the main job spends its time.
# Output is unchanged (the golden tests compare it byte for byte).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS 11)
  message(FATAL_ERROR "UFQ_PGO needs GCC 11 or later (-fprofile-prefix-path); "
                      "the compiler is ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}: "
                      "configure with -DUFQ_PGO=OFF")
endif()
if(UFQ_SANITIZE OR UFQ_TSAN)
  message(FATAL_ERROR "UFQ_PGO with a sanitizer: the profile would describe another program; "
                      "configure with -DUFQ_PGO=OFF")
endif()

include(ExternalProject)
set(UFQ_PGO_ROOT ${CMAKE_BINARY_DIR}/pgo)
set(UFQ_PGO_DATA ${UFQ_PGO_ROOT}/data)
set(UFQ_PGO_TOOL ${UFQ_PGO_ROOT}/build/tools/ufq/ufq)
set(UFQ_PGO_STAMP ${UFQ_PGO_ROOT}/trained.stamp)
# Both builds strip their own directory from the profile files' names, so the
# counts of <pgo>/build/X.o are found by <build>/X.o.
set(UFQ_PGO_GENERATE -flto=auto -fprofile-generate -fprofile-update=single -fprofile-dir=${UFQ_PGO_DATA}
                     -fprofile-prefix-path=${UFQ_PGO_ROOT}/build)
list(JOIN UFQ_PGO_GENERATE " " UFQ_PGO_GENERATE_FLAGS)
set(UFQ_PGO_LAUNCHER "")
if(CMAKE_CXX_COMPILER_LAUNCHER)
  set(UFQ_PGO_LAUNCHER -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

ExternalProject_Add(ufq_pgo_instrumented
  SOURCE_DIR ${PROJECT_SOURCE_DIR}
  BINARY_DIR ${UFQ_PGO_ROOT}/build
  CMAKE_ARGS -G ${CMAKE_GENERATOR}
             -DCMAKE_BUILD_TYPE=Release
             -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
             ${UFQ_PGO_LAUNCHER}
             "-DCMAKE_CXX_FLAGS=${UFQ_PGO_GENERATE_FLAGS}"
             "-DCMAKE_EXE_LINKER_FLAGS=-flto=auto -fprofile-generate"
             -DUFQ_PGO=OFF -DUFQ_WERROR=OFF -DUFQ_BUILD_TESTS=OFF -DUFQ_BUILD_RT=OFF
             -DUFQ_BUILD_BENCH=OFF -DUFQ_BUILD_FUZZ=OFF -DUFQ_INSTALL=OFF
  BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --target ufq
  BUILD_ALWAYS ON
  BUILD_BYPRODUCTS ${UFQ_PGO_TOOL}
  INSTALL_COMMAND ""
  EXCLUDE_FROM_ALL ON)

# The training: the main job as the user runs it (timer_slack 10us, 4
# simulated seconds), at slack 0 (more timer events per packet, 2 s) and one
# small queue (1 s). Without the small run the event queue's insert is not
# inlined into the hrtimer model (docs/simulator.md, "The profile build").
# Old counts are removed first: the files would otherwise add up.
add_custom_command(
  OUTPUT ${UFQ_PGO_STAMP}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${UFQ_PGO_DATA}
  COMMAND ${UFQ_PGO_TOOL} sim -q --duration 4s
  COMMAND ${UFQ_PGO_TOOL} sim -q --duration 2s fq timer_slack 0
  COMMAND ${UFQ_PGO_TOOL} sim -q --duration 1s --queues 1 --flows 100
  COMMAND ${CMAKE_COMMAND} -E touch ${UFQ_PGO_STAMP}
  DEPENDS ${UFQ_PGO_TOOL} ufq_pgo_instrumented
  COMMENT "PGO: training the instrumented ufq on the simulator's main job"
  VERBATIM)
add_custom_target(ufq_pgo_profile DEPENDS ${UFQ_PGO_STAMP})

# Compiles TARGET's sources with the profile (and again when it changes), as
# objects that carry both machine code and GCC's intermediate code
# (-ffat-lto-objects): an executable TARGET is linked with link-time
# optimisation over them (the `ufq` command: the scheduler's and the
# simulator's calls inlined into each other), any other program that links
# the libraries (the tests, an embedding application) uses the machine code
# as usual.
# -fprofile-partial-training: code the training did not run (the other
# commands, the error paths) is optimised as without a profile, not for size.
# -Wno-missing-profile: sources the instrumented build has no counts for (the
# runtime's, which it does not build) are compiled as without a profile.
# -Wno-coverage-mismatch: the one generated source (the traffic registry) lives
# in each build's own directory, so its functions' recorded paths differ.
function(ufq_pgo_use target)
  set(use -fprofile-use -fprofile-partial-training -fprofile-dir=${UFQ_PGO_DATA}
          -fprofile-prefix-path=${CMAKE_BINARY_DIR} -Wno-missing-profile -Wno-coverage-mismatch)
  target_compile_options(${target} PRIVATE ${use} -flto=auto -ffat-lto-objects)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    target_link_options(${target} PRIVATE ${use} -flto=auto)
  endif()
  add_dependencies(${target} ufq_pgo_profile)
  get_target_property(sources ${target} SOURCES)
  set_property(SOURCE ${sources} TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS ${UFQ_PGO_STAMP})
endfunction()
