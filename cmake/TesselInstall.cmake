# Install rules for C++ users (docs/install.md): `cmake --install BUILD --prefix P` puts
#   P/bin/tessel                                   the binary
#   P/lib/libtessel_*.a                            the static library of every folder
#   P/include/tessel/{core,comm,...}/*.h           the public headers, still included as "core/buffer.h"
#   P/include/tessel/core/build_config.h           the generated compile-time switches
#   P/lib/cmake/tessel/tessel{Config,ConfigVersion,Targets}.cmake, FindMETIS.cmake, FindXXHASH.cmake (and the
#   TesselImportedLibrary.cmake they include)
# so that find_package(tessel) gives the imported targets tessel::tessel_core ... tessel::tessel_svm and
# tessel::tessel (the binary). Components: `runtime` (the binary) and `devel` (everything else); the Python wheel
# (pyproject.toml: install.components = ["python"]) takes neither, and under scikit-build none of this is declared.
if(SKBUILD)
  return()
endif()
include(CMakePackageConfigHelpers)

set(TESSEL_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tessel")
# tessel_flags rides along because tessel_core links it publicly; its compile options are BUILD_INTERFACE-only
# (cmake/TesselCompilerFlags.cmake), so consumers inherit none of our warnings or -Werror.
set(TESSEL_EXPORTED_LIBRARIES
  tessel_flags tessel_core tessel_comm tessel_kernels tessel_datasets tessel_sampling tessel_partition tessel_train tessel_svm tessel_app)

install(TARGETS ${TESSEL_EXPORTED_LIBRARIES}
  EXPORT tesselTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT devel
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT devel)
install(TARGETS tessel
  EXPORT tesselTargets
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)

# Every header of the library folders, at the same relative path under include/tessel (tools/ and tests/ are not
# libraries; their headers stay private).
foreach(dir IN ITEMS core comm kernels datasets sampling partition train svm app)
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/${dir}/*.h")
  foreach(header IN LISTS headers)
    get_filename_component(header_dir "${header}" DIRECTORY)
    install(FILES "${PROJECT_SOURCE_DIR}/${header}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tessel/${header_dir}"
            COMPONENT devel)
  endforeach()
endforeach()
install(FILES "${PROJECT_BINARY_DIR}/generated/core/build_config.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tessel/core" COMPONENT devel)

install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION "${TESSEL_INSTALL_CMAKEDIR}" COMPONENT devel)
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/tesselConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/tesselConfig.cmake" INSTALL_DESTINATION "${TESSEL_INSTALL_CMAKEDIR}")
# 0.x: a minor release may change the API, so only the same major.minor satisfies find_package(tessel 0.1).
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/tesselConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/tesselConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/tesselConfigVersion.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/FindMETIS.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/FindXXHASH.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/FindPTScotchParMETIS.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/TesselImportedLibrary.cmake"
  DESTINATION "${TESSEL_INSTALL_CMAKEDIR}" COMPONENT devel)
