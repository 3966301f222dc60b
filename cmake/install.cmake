# Install rules and the Debian package.
#
#   cmake --install build --prefix /usr/local    binaries, man pages, docs
#   cpack --config build/CPackConfig.cmake -B build/package
#     -> build/package/swarmkeeper_<version>_<arch>.deb
#
# The .deb installs under /usr: the daemon and swarmctl in /usr/bin, their
# man pages (generated from --help by help2man when it is installed), the
# sample config as /etc/swarmkeeper/swarmkeeper.ini (a conffile), the systemd
# unit in /lib/systemd/system, and /var/lib/swarmkeeper (the unit's
# StateDirectory). Runtime dependencies come from dpkg-shlibdeps: Debian's
# libcaf, spdlog, fmt, OpenSSL, libedit and libcurl packages, nothing from the build.
include(GNUInstallDirs)

install(TARGETS swarmkeeper swarmctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The config, the unit and the state directory go where Debian expects
# them whatever the prefix is (absolute destinations; DESTDIR still applies).
set(SK_ETC_DIR /etc/swarmkeeper)
set(SK_STATE_DIR /var/lib/swarmkeeper)
set(SK_UNIT_DIR /lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/swarmkeeper.ini DESTINATION ${SK_ETC_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/deploy/swarmkeeper.service DESTINATION ${SK_UNIT_DIR})
install(DIRECTORY DESTINATION ${SK_STATE_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Man pages from the programs' own --help and --version.
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(SK_MAN_DIR ${CMAKE_BINARY_DIR}/man)
  add_custom_command(
    OUTPUT ${SK_MAN_DIR}/swarmkeeper.1.gz ${SK_MAN_DIR}/swarmctl.1.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${SK_MAN_DIR}
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr --help-option=--long-help
            --name=BitTorrent\ tracker\ that\ heals\ sick\ swarms
            --output=${SK_MAN_DIR}/swarmkeeper.1 $<TARGET_FILE:swarmkeeper>
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr
            --name=control\ a\ running\ swarmkeeper\ through\ its\ admin\ API
            --output=${SK_MAN_DIR}/swarmctl.1 $<TARGET_FILE:swarmctl>
    COMMAND gzip -9nf ${SK_MAN_DIR}/swarmkeeper.1 ${SK_MAN_DIR}/swarmctl.1
    DEPENDS swarmkeeper swarmctl
    COMMENT "Man pages from --help (help2man)"
    VERBATIM)
  add_custom_target(man_pages ALL DEPENDS ${SK_MAN_DIR}/swarmkeeper.1.gz ${SK_MAN_DIR}/swarmctl.1.gz)
  install(FILES ${SK_MAN_DIR}/swarmkeeper.1.gz ${SK_MAN_DIR}/swarmctl.1.gz
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man pages (Debian: help2man)")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME swarmkeeper)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "swarmkeeper developers <swarmkeeper@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "self-healing BitTorrent tracker (HTTP and UDP)")
set(CPACK_PACKAGE_DESCRIPTION
    "A BitTorrent tracker built on CAF actors that watches each swarm's health and\nfixes what it can from inside the protocol: which peers it hands out, announce\nintervals and warning messages. HTTP and UDP (BEP 15) announce and scrape,\nan admin API with a web console, Prometheus metrics and clustering.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
# What the unit needs besides the libraries dpkg-shlibdeps finds.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${PROJECT_SOURCE_DIR}/deploy/debian/conffiles"
                                       "${PROJECT_SOURCE_DIR}/deploy/debian/postinst"
                                       "${PROJECT_SOURCE_DIR}/deploy/debian/prerm"
                                       "${PROJECT_SOURCE_DIR}/deploy/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
