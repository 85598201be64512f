/* host_load.h — how the reference tools load the plugin, exactly like a host: dlopen with
 * RTLD_NOW | RTLD_LOCAL, dlsym of the one entry symbol, the table of the ABI version they were
 * built for. The path: --plugin, else $NM_PLUGIN, else the build tree's copy. */
#ifndef NM_HOST_LOAD_H
#define NM_HOST_LOAD_H

#include "navmesh_plugin.h"

/* Returns the table or NULL (why written to why, cap bytes). *handle receives the dlopen handle. */
const nm_plugin_api *nm_host_load_plugin(const char *path, void **handle, char *why, size_t cap);

#endif
