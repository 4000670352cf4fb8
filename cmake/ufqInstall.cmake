# What `cmake --install` puts under the prefix (docs/install.md):
#   include/ufq/...                      public headers (not ufq/reference/, the test oracle)
#   lib/libufq_scheduler, libufq_tc      ufq::core (ufq::scheduler + ufq::tc)
#   lib/libufq_rt, lib/libufq_sim        ufq::rt, ufq::sim
#   lib/cmake/ufq/                       ufqConfig.cmake, version, one targets file per component
#   lib/pkgconfig/ufq.pc, ufq-rt.pc, ufq-sim.pc
#   bin/ufq, share/man/man1/ufq.1        the tool and its manual
#   lib/ufq/libufq_preload.so            the preload library of `ufq run` (not linked by anyone)
#   share/doc/ufq/LICENSE
# Kept here rather than next to each target so that adding a source or a
# header needs no install edit: headers are installed by directory.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(UFQ_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ufq)
set(UFQ_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})  # 0.x: a minor release may break the ABI

# The installed tool finds the installed shared libraries (BUILD_SHARED_LIBS).
file(RELATIVE_PATH _ufq_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
if(TARGET ufq)
  set_target_properties(ufq PROPERTIES INSTALL_RPATH "$ORIGIN/${_ufq_bin_to_lib}")
endif()

# --- libraries, one export set per component --------------------------------
set(UFQ_COMPONENTS core)
set_target_properties(ufq_scheduler PROPERTIES EXPORT_NAME scheduler
                      VERSION ${PROJECT_VERSION} SOVERSION ${UFQ_SOVERSION})
set_target_properties(ufq_tc PROPERTIES EXPORT_NAME tc
                      VERSION ${PROJECT_VERSION} SOVERSION ${UFQ_SOVERSION})
set_target_properties(ufq_core PROPERTIES EXPORT_NAME core)
set(_ufq_core_targets ufq_scheduler ufq_tc ufq_core)
if(TARGET ufq_rt)
  list(APPEND UFQ_COMPONENTS rt)
  set_target_properties(ufq_rt PROPERTIES EXPORT_NAME rt
                        VERSION ${PROJECT_VERSION} SOVERSION ${UFQ_SOVERSION})
  set(_ufq_rt_targets ufq_rt)
endif()
if(TARGET ufq_sim)
  list(APPEND UFQ_COMPONENTS sim)
  set_target_properties(ufq_sim PROPERTIES EXPORT_NAME sim
                        VERSION ${PROJECT_VERSION} SOVERSION ${UFQ_SOVERSION})
  set(_ufq_sim_targets ufq_sim)
  get_target_property(_ufq_sim_type ufq_sim TYPE)
  # A static libufq_sim carries no record of libpcap: the user's link needs it.
  if(_ufq_sim_type STREQUAL "STATIC_LIBRARY")
    set(UFQ_SIM_NEEDS_PCAP TRUE)
    set(UFQ_PC_SIM_REQUIRES "libpcap")
    set(UFQ_PC_SIM_REQUIRES_PRIVATE "")
  else()
    set(UFQ_SIM_NEEDS_PCAP FALSE)
    set(UFQ_PC_SIM_REQUIRES "")
    set(UFQ_PC_SIM_REQUIRES_PRIVATE "libpcap")
  endif()
endif()

# Shared libraries (BUILD_SHARED_LIBS) find each other where they are
# installed: libufq_rt needs libufq_scheduler even when the program that
# loads it was linked --as-needed without it.
foreach(c IN LISTS UFQ_COMPONENTS)
  set_target_properties(${_ufq_${c}_targets} PROPERTIES INSTALL_RPATH "$ORIGIN")
endforeach()

foreach(c IN LISTS UFQ_COMPONENTS)
  install(TARGETS ${_ufq_${c}_targets} EXPORT ufq-${c}-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT ufq-${c}-targets NAMESPACE ufq:: DESTINATION ${UFQ_INSTALL_CMAKEDIR})
endforeach()

# --- the preload library of `ufq run`: loaded by LD_PRELOAD, found by the tool
# next to itself (<bindir>/../lib/ufq), so outside the linker's search path.
if(TARGET ufq_preload)
  install(TARGETS ufq_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ufq)
endif()

# --- headers: include/ufq/ by directory, minus what is not installed ---------
set(_ufq_header_excludes PATTERN reference EXCLUDE
                         PATTERN simulation_reference.hpp EXCLUDE)  # ufq_sim_reference: tests and tool only
if(NOT TARGET ufq_rt)
  list(APPEND _ufq_header_excludes PATTERN rt EXCLUDE)
endif()
if(NOT TARGET ufq_sim)
  list(APPEND _ufq_header_excludes PATTERN sim EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ufq DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" ${_ufq_header_excludes})

# --- CMake package -----------------------------------------------------------
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ufqConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ufqConfig.cmake
                              INSTALL_DESTINATION ${UFQ_INSTALL_CMAKEDIR})
# 0.x: only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ufqConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ufqConfig.cmake ${PROJECT_BINARY_DIR}/ufqConfigVersion.cmake
        DESTINATION ${UFQ_INSTALL_CMAKEDIR})

# --- pkg-config --------------------------------------------------------------
# Paths relative to the .pc file's own place, so the prefix can move.
file(RELATIVE_PATH _ufq_pc_to_prefix ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
set(UFQ_PC_PREFIX "\${pcfiledir}/${_ufq_pc_to_prefix}")
string(REGEX REPLACE "/$" "" UFQ_PC_PREFIX "${UFQ_PC_PREFIX}")
set(UFQ_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
set(UFQ_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
foreach(c IN ITEMS core rt sim)
  if(NOT c IN_LIST UFQ_COMPONENTS)
    continue()
  endif()
  set(_pc_name ufq-${c})
  if(c STREQUAL "core")
    set(_pc_name ufq)
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${_pc_name}.pc.in ${PROJECT_BINARY_DIR}/${_pc_name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${_pc_name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# --- the tool, its manual, the licence -----------------------------------------
if(TARGET ufq)
  install(TARGETS ufq RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/tools/ufq/ufq.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
