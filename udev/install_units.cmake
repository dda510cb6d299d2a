# Runs at install time (install(CODE) includes it): configures the units that name the installed
# oaprofd with the prefix of this install, so that `cmake --install --prefix P` and CPack's
# packaging prefix (/usr) get ExecStart=P/bin/oaprofd, not the prefix the build was configured with.
# file(INSTALL) puts DESTDIR in front of the destination itself. OAPROF_UNITS_* are set by
# udev/CMakeLists.txt in the line that includes this script.
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
set(out "${OAPROF_UNITS_BINARY_DIR}/installed")
configure_file("${OAPROF_UNITS_SOURCE_DIR}/oaprofd.service.in" "${out}/oaprofd.service" @ONLY)
configure_file("${OAPROF_UNITS_SOURCE_DIR}/oaprofd-exporter.conf.in" "${out}/exporter.conf" @ONLY)
file(INSTALL "${out}/oaprofd.service" DESTINATION "${unit_dir}")
file(INSTALL "${out}/exporter.conf" DESTINATION "${dropin_dir}")
