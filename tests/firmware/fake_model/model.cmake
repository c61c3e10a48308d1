# A stand-in backend for tests/test_model_interface.py: th_model.h implemented by hand, with
# no load hook, so the protocol firmware's behaviour for such a backend can be checked.
list(APPEND TH_APP_SOURCES "${CMAKE_CURRENT_LIST_DIR}/fake_model.c")
list(APPEND TH_APP_INCLUDE_DIRS "${CMAKE_CURRENT_LIST_DIR}")
