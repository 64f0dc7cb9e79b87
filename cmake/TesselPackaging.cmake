# `cpack -G DEB` (or `make package`): tessel_<version>_amd64.deb with the binary, the headers, the static libraries
# and the CMake package, installed under /usr. docs/install.md says what it depends on and why.
#
# Depends = what dpkg-shlibdeps finds for the binary (libtbb12, libopenblas0, libmpi40, ...: `tessel` runs) + the -dev
# packages a C++ consumer needs: the exported libraries are static, so find_package(tessel) finds, and the
# consumer's link pulls in, every library they use (cmake/tesselConfig.cmake.in). The .deb is made from a CPU-only
# build: a CUDA build's binary needs /usr/local/cuda's libraries, which no Debian package provides, so cpack refuses
# it (cmake/TesselCPackOptions.cmake.in) rather than make a package that does not run.
if(SKBUILD)
  return()
endif()

set(TESSEL_PACKAGE_MAINTAINER "tessel maintainers <maintainers@users.noreply.a-seed-7afd24c0.example>"
    CACHE STRING "Maintainer field of the .deb")
set(TESSEL_PACKAGE_HOMEPAGE "" CACHE STRING "Homepage field of the .deb (left out when empty)")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tessel)
set(CPACK_PACKAGE_VENDOR tessel)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${TESSEL_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed GCN and SVM training engine (C++20, MPI, oneTBB)")
set(CPACK_PACKAGE_DESCRIPTION
    "tessel trains graph convolutional networks and support vector machines on one machine or many (MPI).\n\
The package holds the tessel binary (convert, generate, info, partition, train, predict), the static\n\
libraries and headers, and the CMake package for find_package(tessel).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the binary; static libraries keep their symbols (CMake strips executables only)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tessel_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${TESSEL_PACKAGE_MAINTAINER}")
if(TESSEL_PACKAGE_HOMEPAGE)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${TESSEL_PACKAGE_HOMEPAGE}")
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # needs dpkg-shlibdeps (dpkg-dev, tools/setup-deps.sh)
set(_tessel_dev_depends
    libtbb-dev libmetis-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libopenblas-dev zlib1g-dev libbz2-dev
    libxxhash-dev)
if(TESSEL_MPI)
  list(APPEND _tessel_dev_depends libopenmpi-dev)
endif()
if(TESSEL_HAVE_PARMETIS)
  list(APPEND _tessel_dev_depends libptscotch-dev liblzma-dev)
endif()
list(JOIN _tessel_dev_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# cmake (>= 3.25) for find_package(tessel) is a suggestion, not a dependency: the binary runs without it.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake (>= 3.25), openmpi-bin")

configure_file("${CMAKE_CURRENT_LIST_DIR}/TesselCPackOptions.cmake.in"
               "${PROJECT_BINARY_DIR}/TesselCPackOptions.cmake" @ONLY)
set(CPACK_PROJECT_CONFIG_FILE "${PROJECT_BINARY_DIR}/TesselCPackOptions.cmake")
include(CPack)
