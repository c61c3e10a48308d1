# Kernel test firmware (tests/kernels/firmware): runs the case records of cases.bin
# (semihosting) through th_kcase_run and writes results.bin. Options (cmake -D...):
#   TH_KTEST_PORTABLE=ON   build the kernels with TH_NN_FORCE_PORTABLE (no DSP path)
#   TH_KTEST_BIG=ON        large case buffers (bench layers; boards with MiBs of RAM)
#   TH_KTEST_NO_MVE=ON     an MVE core's kernels without their Helium paths (the DSP build)
set(TH_APP_NAME kernel_tests)
set(TH_APP_SOURCES
  "${CMAKE_CURRENT_LIST_DIR}/main.c"
  "${CMAKE_CURRENT_LIST_DIR}/../driver/th_kcase.c"
  "${CMAKE_CURRENT_LIST_DIR}/../driver/th_kcase_movement.c")
set(TH_APP_INCLUDE_DIRS "${CMAKE_CURRENT_LIST_DIR}/../driver")
if(TH_KTEST_BIG AND BOARD STREQUAL "mps3-an547")  # 512 KiB of DTCM
  list(APPEND TH_APP_DEFINES TH_KTEST_RECORD_CAP=131072 TH_KTEST_RESULT_CAP=49152
       TH_KTEST_ARENA_CAP=262144)
elseif(TH_KTEST_BIG)
  list(APPEND TH_APP_DEFINES TH_KTEST_RECORD_CAP=196608 TH_KTEST_RESULT_CAP=65536
       TH_KTEST_ARENA_CAP=393216)
endif()
if(TH_KTEST_PORTABLE AND TARGET th_kernels)
  target_compile_definitions(th_kernels PUBLIC TH_NN_FORCE_PORTABLE=1)
endif()
if(TH_KTEST_NO_MVE AND TARGET th_kernels)
  target_compile_definitions(th_kernels PUBLIC TH_NN_FORCE_NO_MVE=1)
endif()
