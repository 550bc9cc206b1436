/* An injection library whose CUPTI cannot be found (capture_without_cupti.sh). */
int gpuscope_test_cupti_stand_in(void);

int InitializeInjection(void) { return gpuscope_test_cupti_stand_in() == 0; }
