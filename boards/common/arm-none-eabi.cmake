# Toolchain file for bare-metal Cortex-M boards (arm-none-eabi-gcc + newlib).
# The CPU flags come from boards/<BOARD>/board.json, so one file serves all
# boards. BOARD is forwarded into CMake's try_compile projects below.

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_OBJCOPY arm-none-eabi-objcopy CACHE FILEPATH "objcopy")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "size")

# Compiler checks must not try to link a bare-metal executable.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES BOARD)

if(NOT BOARD)
  message(FATAL_ERROR "arm-none-eabi.cmake needs -DBOARD=<name>")
endif()
get_filename_component(_th_boards_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
file(READ "${_th_boards_dir}/${BOARD}/board.json" _th_json)
string(JSON _th_cpu GET "${_th_json}" cpu)
string(JSON _th_fpu GET "${_th_json}" fpu)
string(JSON _th_abi GET "${_th_json}" float_abi)

set(_th_cpu_flags "-mthumb -mcpu=${_th_cpu}")
# "auto" (e.g. Cortex-M55): let -mcpu pick the FPU, which includes MVE.
if(_th_fpu AND NOT _th_fpu STREQUAL "auto")
  string(APPEND _th_cpu_flags " -mfpu=${_th_fpu}")
endif()
if(_th_abi)
  string(APPEND _th_cpu_flags " -mfloat-abi=${_th_abi}")
endif()

# -fstack-usage -fcallgraph-info=su: per-function stack and the call graph, for the static
# worst-case stack bound (host/tinyhost/deploy/stack.py)
set(CMAKE_C_FLAGS_INIT
    "${_th_cpu_flags} -ffunction-sections -fdata-sections -fstack-usage -fcallgraph-info=su")
set(CMAKE_ASM_FLAGS_INIT "${_th_cpu_flags}")
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "${_th_cpu_flags} --specs=nano.specs -nostartfiles -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
