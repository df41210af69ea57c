# What `cmake --install` puts under a prefix, and the libpacer-dev Debian package (`make package`)
# made of the same files:
# - component `dev` (the default install and the package): the public headers, pacer::pacer's
#   library, PacerConfig.cmake for find_package, pacer.pc for pkg-config, and pacer-report;
# - component `apps` (`cmake --install build --component apps`): the apps, which are not in a
#   default install.
include(CMakePackageConfigHelpers)
set(PACER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Pacer)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/pacer DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev)
install(TARGETS pacer_library EXPORT PacerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev NAMELINK_COMPONENT dev)
# `cmake --install --strip` (and the package) strips the archive's debug information too, which
# CMake leaves in static libraries: 140 MB of it, a tenth of that without.
if(NOT BUILD_SHARED_LIBS)
  install(CODE "if(CMAKE_INSTALL_DO_STRIP)
    execute_process(COMMAND ${CMAKE_STRIP} --strip-debug
      \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:pacer_library>\"
      COMMAND_ERROR_IS_FATAL ANY)
  endif()" COMPONENT dev)
endif()
install(EXPORT PacerTargets NAMESPACE pacer:: DESTINATION ${PACER_CMAKE_DIR} COMPONENT dev)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/apps/report/pacer_report.py RENAME pacer-report
        DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/apps/report/trace_floors.py
              ${PROJECT_SOURCE_DIR}/apps/report/accuracy_curve.py
        DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)

# A static pacer::pacer needs its dependencies at the caller's link, a shared one does not: the
# package configuration finds them only for the archive.
set(PACER_STATIC_LIBRARY ON)
if(BUILD_SHARED_LIBS)
  set(PACER_STATIC_LIBRARY OFF)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/PacerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/PacerConfig.cmake INSTALL_DESTINATION ${PACER_CMAKE_DIR})
# 0.x: a new minor version may change the API, so a caller asking for 0.1 takes any 0.1.x.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/PacerConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/PacerConfig.cmake ${PROJECT_BINARY_DIR}/PacerConfigVersion.cmake
        DESTINATION ${PACER_CMAKE_DIR} COMPONENT dev)

# pacer.pc finds the prefix from its own place (pkg-config's ${pcfiledir}), so an unpacked package
# works where it lies. An archive lists its dependencies as Requires and Libs, a shared library as
# Requires.private.
file(RELATIVE_PATH PACER_PC_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
set(PACER_PC_REQUIRES "Requires")
set(PACER_PC_LIBS "-pthread")
if(PACER_HAVE_CUDA)
  string(APPEND PACER_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
if(BUILD_SHARED_LIBS)
  set(PACER_PC_REQUIRES "Requires.private")
  set(PACER_PC_LIBS "")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/pacer.pc.in ${PROJECT_BINARY_DIR}/pacer.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pacer.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)

# The Debian package: component dev, with the Debian packages its headers and library need.
if(PROJECT_IS_TOP_LEVEL)
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME libpacer-dev)
  set(CPACK_PACKAGE_VENDOR Pacer)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
      "Pacer: a straggler-resilient parameter server for distributed training (development files)")
  set(CPACK_PACKAGE_CONTACT "Pacer developers <pacer@localhost>")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_STRIP_FILES ON)  # as Debian's -dev packages: debug information belongs elsewhere
  set(CPACK_COMPONENTS_ALL dev)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libopenmpi-dev, libucx-dev, libprotobuf-dev, libgoogle-glog-dev, libgflags-dev, pkg-config")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-matplotlib")
  include(CPack)
endif()
