# The interpreter backend: blob validation and dispatch, and its th_model.h implementation.
# Included by the model.cmake that tinyhost convert --backend interpreter writes; the op
# adapters (ops_*.c) are added there, only those the model's op table names.
set(TH_INTERP_DIR "${CMAKE_CURRENT_LIST_DIR}")
list(APPEND TH_APP_SOURCES
  "${TH_INTERP_DIR}/th_interp.c"
  "${TH_INTERP_DIR}/th_interp_model.c")
list(APPEND TH_APP_INCLUDE_DIRS "${TH_INTERP_DIR}" "${TH_INTERP_DIR}/../include")
