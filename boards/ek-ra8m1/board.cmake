# ek-ra8m1: no semihosting host under Renode (faults report on the UART and reset), and the
# SCI's receive event number for the UART driver (drivers/uart_renesas_sci.c).
include("${TH_BOARDS_DIR}/common/stm32_board.cmake")
th_board_get(_th_sci_rx_event uart rx_event)
target_compile_definitions(th_board PRIVATE TH_UART_RX_EVENT=${_th_sci_rx_event}u)
