/* ledges_util.h — helpers of the ledge evidence tests: the built tools, temporary folders,
 * baking a scene (scenegen + navbake) into a folder, copying a file. */
#ifndef NM_TEST_LEDGES_UTIL_H
#define NM_TEST_LEDGES_UTIL_H

#include <stdbool.h>
#include <stddef.h>

const char *lu_env(const char *k, const char *d);
void lu_tool(char *out, size_t n, const char *tool);   /* NM_BUILD_ROOT/tools/T/T */
bool lu_tools_present(void);
void lu_mkdtemp(char *dir, size_t n);                 /* /tmp/nm_ledges_XXXXXX */
void lu_rmdir(const char *dir);
void lu_run(const char *cmd);                          /* asserts exit status 0 */
/* scenegen SCENE.json --out DIR/src (scene path relative to NM_SOURCE_ROOT) */
void lu_scenegen(const char *scene_rel, const char *dir);
/* navbake --obj OBJ [--zone ZONE] --out OUT EXTRA --quiet (zone may be NULL) */
void lu_navbake(const char *obj, const char *zone, const char *out, const char *extra);
void lu_copy(const char *from, const char *to);
bool lu_exists(const char *path);

#endif
