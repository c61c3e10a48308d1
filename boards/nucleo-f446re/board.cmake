# nucleo-f446re: clock driver, no semihosting, run-time counter unit (see the shared file).
include("${TH_BOARDS_DIR}/common/stm32_board.cmake")
