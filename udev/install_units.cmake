# Runs at install time (install(SCRIPT) of build/udev/install_units_here.cmake, which sets
# OAPROF_UNITS_*, includes it): configures the units that name the installed oaprofd with the
# prefix of this install, so that `cmake --install --prefix P` and CPack's packaging prefix (/usr)
# get ExecStart=P/bin/oaprofd, not the prefix the build was configured with.
# file(INSTALL) puts DESTDIR in front of the destination itself.
function(oaprof_full_dir dir out)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

oaprof_full_dir("${OAPROF_UNITS_BINDIR}" CMAKE_INSTALL_FULL_BINDIR)
oaprof_full_dir("${OAPROF_UNITS_UNIT_DIR}" unit_dir)
oaprof_full_dir("${OAPROF_UNITS_DROPIN_DIR}" dropin_dir)
# Each install stages its files in a directory of its own (named by its DESTDIR and prefix): two
# installs at once into different trees (the install tests run side by side, CPack beside them)
# would otherwise write the same temporary file in configure_file, and one would find it gone.
string(SHA256 install_key "$ENV{DESTDIR}\n${CMAKE_INSTALL_PREFIX}")
string(SUBSTRING "${install_key}" 0 16 install_key)
set(out "${OAPROF_UNITS_BINARY_DIR}/installed/${install_key}")
configure_file("${OAPROF_UNITS_SOURCE_DIR}/oaprofd.service.in" "${out}/oaprofd.service" @ONLY)
configure_file("${OAPROF_UNITS_SOURCE_DIR}/oaprofd-exporter.conf.in" "${out}/exporter.conf" @ONLY)
file(INSTALL "${out}/oaprofd.service" DESTINATION "${unit_dir}")
file(INSTALL "${out}/exporter.conf" DESTINATION "${dropin_dir}")
file(REMOVE_RECURSE "${out}")
