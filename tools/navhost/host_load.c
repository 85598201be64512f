/* host_load.c — dlopen of the plugin the way a host does it (see host_load.h). */
#include "host_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef NM_PLUGIN_DEFAULT_PATH
#define NM_PLUGIN_DEFAULT_PATH "libnavmesh_plugin.so"
#endif

const nm_plugin_api *nm_host_load_plugin(const char *path, void **handle, char *why, size_t cap)
{
    *handle = NULL;
    if (!path) path = getenv("NM_PLUGIN");
    if (!path) path = NM_PLUGIN_DEFAULT_PATH;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, cap, "cannot load the plugin %s: %s", path, dlerror());
        return NULL;
    }
    nm_plugin_get_fn get = NULL;
    *(void **)(&get) = dlsym(h, "nm_plugin_get"); /* POSIX: object pointer to function pointer */
    if (!get) {
        snprintf(why, cap, "%s has no entry symbol nm_plugin_get", path);
        dlclose(h);
        return NULL;
    }
    const nm_plugin_api *api = get(NM_PLUGIN_ABI_VERSION);
    if (!api) {
        snprintf(why, cap, "%s does not speak ABI version %d", path, NM_PLUGIN_ABI_VERSION);
        dlclose(h);
        return NULL;
    }
    *handle = h;
    return api;
}
