# The protocol firmware: board + serial protocol + the model interface (model/th_model.h),
# implemented by one generated model dir (tinyhost convert), whose model.cmake pulls in its
# backend (e.g. firmware/interpreter/interpreter.cmake) and the sources it needs.
#
#   cmake -S . -B build/fw -DBOARD=host -DAPP=firmware/app -DMODEL_DIR=<convert output>
if(NOT MODEL_DIR)
  message(FATAL_ERROR "firmware/app needs -DMODEL_DIR=<dir made by tinyhost convert>")
endif()
set(TH_APP_NAME tinyhost_fw)
set(TH_APP_SOURCES
  "${CMAKE_CURRENT_LIST_DIR}/main.c"
  "${TH_ROOT}/firmware/protocol/th_proto.c"
  "${TH_ROOT}/firmware/selfcheck/th_selfcheck.c")
set(TH_APP_INCLUDE_DIRS
  "${TH_ROOT}/firmware/model"
  "${TH_ROOT}/firmware/include"
  "${TH_ROOT}/firmware/protocol"
  "${TH_ROOT}/firmware/selfcheck")
set(TH_APP_LINK_KERNELS ON)
# Profiled invokes call th_icount_mark() (firmware/include/th_profile.h).
set(TH_APP_DEFINES TH_PROFILE_ICOUNT_MARK=1)
# -DTH_SANITIZE=ON (host board): AddressSanitizer + UBSan, for the robustness tests.
if(TH_SANITIZE AND NOT TH_CORTEX_M)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
