/* Stands in for CUPTI at link time only: the stand-in injection library
   (inject_stand_in.c) needs it as libcupti.so.999, a name no folder on the
   loader's path holds, as a machine without CUDA has no libcupti at all. */
int gpuscope_test_cupti_stand_in(void) { return 0; }
