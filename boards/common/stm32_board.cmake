# Shared by the real-hardware / Renode STM32 boards: included from boards/<name>/board.cmake
# (CMakeLists.txt includes that after creating th_board). Reads the additive board.json keys:
#   "clock": {"driver": "stm32f4"|"stm32f7"|"stm32l4r5", "hse_hz": <Hz or 0>, "overdrive": bool}
#       -> drivers/clock_<driver>.c, called from the board's th_board_hw_init (board_hw.c)
#   "semihosting": false   -> semihost.c stubs (no debugger host on hardware or Renode)
#   counter driver "dwt"   -> the counter decides its unit at run time (cycles | systick)
th_board_get(_th_clock_driver clock driver)
th_board_get(_th_clock_hse clock hse_hz)
th_board_get(_th_clock_od clock overdrive)
th_board_get(_th_clock_hz clock_hz)
th_board_get(_th_semihosting semihosting)

if(_th_clock_driver)
  set(_th_clock_src "${TH_BOARDS_DIR}/common/drivers/clock_${_th_clock_driver}.c")
  if(NOT EXISTS "${_th_clock_src}")
    message(FATAL_ERROR "tinyhost: board ${BOARD}: no clock driver ${_th_clock_src}")
  endif()
  if(NOT _th_clock_hse)
    set(_th_clock_hse 0)
  endif()
  set(_th_od 0)
  if(_th_clock_od)
    set(_th_od 1)
  endif()
  target_sources(th_board PRIVATE "${_th_clock_src}")
  target_compile_definitions(th_board PRIVATE
    TH_BOARD_HW_INIT=1
    TH_CLOCK_SYSCLK_HZ=${_th_clock_hz}
    TH_CLOCK_HSE_HZ=${_th_clock_hse}
    TH_CLOCK_OVERDRIVE=${_th_od})
endif()

# th_board_get returns "" for both null and a missing key; only an explicit false disables.
string(JSON _th_sh_type ERROR_VARIABLE _th_sh_err TYPE "${TH_BOARD_JSON}" semihosting)
if(NOT _th_sh_err AND _th_sh_type STREQUAL "BOOLEAN" AND NOT _th_semihosting)
  target_compile_definitions(th_board PRIVATE TH_SEMIHOSTING=0)
  target_compile_definitions(th_board_rt PRIVATE TH_SEMIHOSTING=0) # faults reset (startup.c)
endif()

if(TH_COUNTER_DRIVER STREQUAL "dwt")
  target_compile_definitions(th_board PRIVATE TH_COUNTER_UNIT_RUNTIME=1)
endif()
