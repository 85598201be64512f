/* ledges_util.c — the helpers of ledges_util.h (test code: asserts through Criterion). */
#include "ledges_util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *lu_env(const char *k, const char *d)
{
    const char *v = getenv(k);
    return v && *v ? v : d;
}

void lu_tool(char *out, size_t n, const char *tool)
{
    snprintf(out, n, "%s/tools/%s/%s", lu_env("NM_BUILD_ROOT", "."), tool, tool);
}

bool lu_tools_present(void)
{
    char a[600], b[600];
    lu_tool(a, sizeof a, "scenegen");
    lu_tool(b, sizeof b, "navbake");
    return access(a, X_OK) == 0 && access(b, X_OK) == 0;
}

void lu_mkdtemp(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/nm_ledges_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

void lu_rmdir(const char *dir)
{
    if (!dir[0] || getenv("NM_KEEP_TMP")) return;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
}

void lu_run(const char *cmd)
{
    cr_assert_eq(system(cmd), 0, "command failed: %s", cmd);
}

void lu_scenegen(const char *scene_rel, const char *dir)
{
    char sg[600], cmd[4096];
    lu_tool(sg, sizeof sg, "scenegen");
    snprintf(cmd, sizeof cmd, "'%s' '%s/%s' --out '%s/src' > /dev/null", sg, lu_env("NM_SOURCE_ROOT", "."),
             scene_rel, dir);
    lu_run(cmd);
}

void lu_navbake(const char *obj, const char *zone, const char *out, const char *extra)
{
    char nb[600], cmd[8192], zarg[1200] = "";
    lu_tool(nb, sizeof nb, "navbake");
    if (zone) snprintf(zarg, sizeof zarg, "--zone '%s'", zone);
    snprintf(cmd, sizeof cmd, "'%s' --obj '%s' %s --out '%s' %s --quiet", nb, obj, zarg, out, extra ? extra : "");
    lu_run(cmd);
}

void lu_copy(const char *from, const char *to)
{
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    lu_run(cmd);
}

bool lu_exists(const char *path)
{
    return access(path, F_OK) == 0;
}
