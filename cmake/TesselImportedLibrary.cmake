# tessel_imported_library(PKG [MORE_REQUIRED_VARS...]): how the find modules of one library end (FindMETIS.cmake,
# FindXXHASH.cmake): PKG_FOUND from PKG_LIBRARY, PKG_INCLUDE_DIR and any further variables, the imported target
# PKG::PKG, and the two cache entries marked advanced. A macro, so PKG_FOUND is set in the find module's scope.
macro(tessel_imported_library pkg)
  include(FindPackageHandleStandardArgs)
  find_package_handle_standard_args(${pkg} REQUIRED_VARS ${pkg}_LIBRARY ${pkg}_INCLUDE_DIR ${ARGN})
  if(${pkg}_FOUND AND NOT TARGET ${pkg}::${pkg})
    add_library(${pkg}::${pkg} UNKNOWN IMPORTED)
    set_target_properties(${pkg}::${pkg} PROPERTIES IMPORTED_LOCATION "${${pkg}_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${${pkg}_INCLUDE_DIR}")
  endif()
  mark_as_advanced(${pkg}_INCLUDE_DIR ${pkg}_LIBRARY)
endmacro()
