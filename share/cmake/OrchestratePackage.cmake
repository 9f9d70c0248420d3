# The binary packages `scripts/package` makes with CPack from the install
# rules: a relocatable .tar.gz (unpack anywhere, run bin/orchestrate) and a
# .deb for Debian 12 (installs under /usr). Both hold the front end, the
# engine, the plugins, the SDK, the shipped recipes, the docs, the man page
# and the bash completion. LibTorch is not in them (5.5 GB with its CUDA
# libraries): the engine uses the torch it was built against where it still
# is, else the one install.md says how it finds.
set(CPACK_PACKAGE_NAME orchestrate)
set(CPACK_PACKAGE_VENDOR "orchestrate developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Deep-learning experiment orchestrator: trains image classifiers with LibTorch from a TOML recipe")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/share/doc/LICENSE)
set(CPACK_GENERATOR TGZ DEB)
set(CPACK_PACKAGE_FILE_NAME ${CPACK_PACKAGE_NAME}-${PROJECT_VERSION}-linux-${CMAKE_SYSTEM_PROCESSOR})
# The tarball unpacks into one directory, orchestrate-VERSION-linux-ARCH/,
# which is the prefix: bin/, lib/, libexec/, share/.
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
set(CPACK_STRIP_FILES OFF)  # the plugin file check reads the build notes; symbols help a user's backtrace

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "orchestrate developers")  # required by the .deb format
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The Debian packages of the shared libraries the binaries load, found by
# dpkg-shlibdeps. LibTorch comes from the torch wheel, which no Debian
# package holds: its directory is "private", so dpkg-shlibdeps looks there
# for the libraries and asks no package for them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${TORCH_INSTALL_PREFIX}/lib;${CMAKE_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, dataset-fashion-mnist")

include(CPack)
