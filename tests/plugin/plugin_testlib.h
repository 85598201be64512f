/* plugin_testlib.h — what the plugin tests share: loading the plugin like a host, the demo pack's
 * path, running a tool and capturing its output, and comparing result JSON without timings. */
#ifndef NM_PLUGIN_TESTLIB_H
#define NM_PLUGIN_TESTLIB_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "navmesh_plugin.h"

/* The table of the plugin at $NM_PLUGIN (dlopen RTLD_LOCAL); fails the test when absent. */
const nm_plugin_api *pt_api(void);
/* $NM_DEMO_PACK (built by meson). */
const char *pt_demo_pack(void);
/* Runs a shell command, returns its exit status and its stdout (malloc'd, NUL-terminated). */
int pt_run(const char *cmd, char **out);
/* The JSON text with debug.times_ms removed (timings differ between two runs), re-printed. */
char *pt_strip_times(const char *json);

#endif
