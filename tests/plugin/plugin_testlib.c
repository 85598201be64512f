/* plugin_testlib.c — helpers of the plugin tests (see plugin_testlib.h). */
#include "plugin_testlib.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const nm_plugin_api *pt_api(void)
{
    static const nm_plugin_api *api;
    if (api) return api;
    const char *path = getenv("NM_PLUGIN");
    cr_assert_not_null(path, "NM_PLUGIN is not set (run through meson test)");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h, "dlopen %s: %s", path, dlerror());
    nm_plugin_get_fn get = NULL;
    *(void **)(&get) = dlsym(h, "nm_plugin_get");
    cr_assert_not_null(get, "no entry symbol");
    api = get(NM_PLUGIN_ABI_VERSION);
    cr_assert_not_null(api);
    return api;
}

const char *pt_demo_pack(void)
{
    const char *p = getenv("NM_DEMO_PACK");
    cr_assert_not_null(p, "NM_DEMO_PACK is not set (run through meson test)");
    return p;
}

int pt_run(const char *cmd, char **out)
{
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "%s", cmd);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
    }
    buf[n] = '\0';
    int st = pclose(f);
    if (out) *out = buf;
    else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *pt_strip_times(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "not JSON: %.200s", json);
    cJSON *d = cJSON_GetObjectItem(o, "debug");
    if (d) cJSON_DeleteItemFromObject(d, "times_ms");
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}
