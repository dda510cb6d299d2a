# Included by CMakeLists.txt where OAPROF_HARDEN is ON: Debian's hardening flags (its comment says
# which and why), each added only where this compiler and linker accept it.
include(CheckCXXCompilerFlag)
include(CheckCXXSourceCompiles)
include(CheckLinkerFlag)
include(CheckPIESupported)

# PIE asked for at link time, not left to the compiler's default (GCC's is PIE on Debian and
# Ubuntu, not everyone's): with CMAKE_POSITION_INDEPENDENT_CODE, CMake then links with -pie.
check_pie_supported(LANGUAGES C CXX)

set(hardening_applied "")
# -Wformat first, and in every check: GCC refuses -Werror=format-security without it.
set(CMAKE_REQUIRED_FLAGS -Wformat)
foreach(flag -fstack-protector-strong -fstack-clash-protection -fcf-protection -Wformat
             -Werror=format-security)
  string(MAKE_C_IDENTIFIER "OAPROF_COMPILER_TAKES${flag}" takes)
  check_cxx_compiler_flag(${flag} ${takes})
  if(${takes})
    add_compile_options(${flag})
    list(APPEND hardening_applied ${flag})
  endif()
endforeach()
unset(CMAKE_REQUIRED_FLAGS)
foreach(flag -Wl,-z,relro -Wl,-z,now)
  string(MAKE_C_IDENTIFIER "OAPROF_LINKER_TAKES${flag}" takes)
  check_linker_flag(CXX ${flag} ${takes})
  if(${takes})
    add_link_options(${flag})
    list(APPEND hardening_applied ${flag})
  endif()
endforeach()

# FORTIFY only where the code is optimised (glibc warns, and -Werror fails, without -O), and
# only where the compiler does not define it already: Ubuntu's GCC defines _FORTIFY_SOURCE=3
# itself, which a second definition would lower to 2.
set(CMAKE_REQUIRED_FLAGS -O2)
check_cxx_source_compiles("#ifdef _FORTIFY_SOURCE
#error the compiler defines _FORTIFY_SOURCE itself
#endif
int main() { return 0; }" OAPROF_COMPILER_LEAVES_FORTIFY_UNSET)
unset(CMAKE_REQUIRED_FLAGS)
if(OAPROF_COMPILER_LEAVES_FORTIFY_UNSET)
  add_compile_definitions($<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:_FORTIFY_SOURCE=2>)
  list(APPEND hardening_applied -D_FORTIFY_SOURCE=2)
else()
  list(APPEND hardening_applied "the compiler's own _FORTIFY_SOURCE")
endif()
list(JOIN hardening_applied " " hardening_applied)
message(STATUS "hardening (OAPROF_HARDEN): PIE ${hardening_applied}")
