/* recast_none.c — stands in for recast_shim.cpp when Recast is not installed: navbake then only
 * bakes with --walkable-as-is and says so clearly otherwise. */
#include "recast_shim.h"

#include "base/base.h"

#include <stdio.h>
#include <string.h>

bool nm_rc_available(void) { return false; }

void nm_rc_mesh_free(nm_rc_mesh *m)
{
    if (m) memset(m, 0, sizeof *m);
}

int nm_rc_build(const nm_rc_input *in, const nm_rc_params *p, nm_rc_mesh *out, char *msg, size_t msg_cap)
{
    (void)in;
    (void)p;
    memset(out, 0, sizeof *out);
    if (msg && msg_cap)
        snprintf(msg, msg_cap, "navbake was built without Recast (librecast-dev): use --walkable-as-is");
    return NM_ERR_STATE;
}
