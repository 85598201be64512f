/* fields_io.c — BNVF v2, the fields sidecar (design article 旁包 and 旁包校验): the six checks
 * on load in the article's order, the FSPN columns of a tile merged into its decoded grid records,
 * the per-region component DAGs (FSCC) with reachFrom, the wall-keep table (FWAL), the optional
 * off-mesh landings (FLNK) and openable cells (FOPN), and the writer. Byte layout:
 * reference-maaend.md §4.7. */
#include "grid_io.h"

#include <stdlib.h>
#include <string.h>

/* ---- FCON: the rule constants this build runs with ---------------------------------------------- */

void nm_bnvf_fcon(uint8_t out[NM_BNVF_FCON_SIZE])
{
    const double f[15] = {NM_kCS,     NM_kClimb, NM_kSlope, NM_kStepUp,  NM_kBumpUp,
                          NM_kWallH,  NM_kMcHBand, NM_kMergeH, NM_kEdtCap, 0.4 /* wall sample step */,
                          0.2 /* hit sample step */, 4.0 /* wall bbox pad */, NM_kStepTax,
                          NM_kClrLambda, 0.0};
    const int32_t i[6] = {NM_kBumpCells, NM_kDipCells, NM_kFieldHalo, (int32_t)NM_kWalkableFlags,
                          NM_BNVF_RULES, 0};
    /* Little-endian by hand: no allocation, so FCON can never come out short. */
    for (int k = 0; k < 15; k++) {
        uint64_t v;
        memcpy(&v, &f[k], 8);
        for (int j = 0; j < 8; j++) out[8 * k + j] = (uint8_t)(v >> (8 * j));
    }
    for (int k = 0; k < 6; k++)
        for (int j = 0; j < 4; j++) out[120 + 4 * k + j] = (uint8_t)((uint32_t)i[k] >> (8 * j));
}

/* ---- loading and the six checks (旁包校验) --------------------------------------------------------- */

void nm_bnvf_free(nm_bnvf *f)
{
    if (!f) return;
    for (uint32_t z = 0; z < f->zone_count; z++) nm_free(f->zones[z].name);
    nm_free(f->zones);
    nm_free(f->zone_of_bgrd);
    nm_free(f->links);
    nm_free(f->link_zones);
    nm_free(f->opens);
    nm_free(f->open_zones);
    nm_free(f->owned);
    memset(f, 0, sizeof *f);
}

typedef struct sect { bool have; uint64_t at, size; } sect;

enum { S_FCON, S_FZON, S_FSPN, S_FSCC, S_FWAL, S_FLNK, S_FOPN, S_COUNT };
static const char k_tags[S_COUNT][5] = {"FCON", "FZON", "FSPN", "FSCC", "FWAL", "FLNK", "FOPN"};

static int parse_fzon(nm_bnvf *f, const sect *s, const char *name, nm_error *err)
{
    nm_cursor all = nm_cur(f->bytes, f->size);
    nm_cursor c = nm_cur_slice(&all, s[S_FZON].at, s[S_FZON].size);
    uint32_t zc = nm_cur_u32(&c);
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "%s: FZON: truncated", name);
    if (zc > nm_cur_left(&c) / 60)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: FZON: %u zones past the section", name, zc);
    f->zones = (nm_bnvf_zone *)nm_calloc(zc ? zc : 1, sizeof *f->zones);
    if (!f->zones) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    f->zone_count = zc;
    for (uint32_t i = 0; i < zc; i++) {
        nm_bnvf_zone *z = &f->zones[i];
        z->bgrd_zone = -1;
        z->name_len = nm_cur_u32(&c);
        size_t padded = ((size_t)z->name_len + 3) & ~(size_t)3;
        const uint8_t *nb = z->name_len <= nm_cur_left(&c) ? nm_cur_bytes(&c, padded) : NULL;
        if (!nb) return nm_fail(err, NM_ERR_CORRUPT, "%s: FZON: zone %u: name past the section", name, i);
        z->name = (char *)nm_malloc((size_t)z->name_len + 1);
        if (!z->name) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
        memcpy(z->name, nb, z->name_len);
        z->name[z->name_len] = 0;
        z->global_regions = nm_cur_u32(&c);
        z->tile_count = nm_cur_u32(&c);
        z->spn_off = nm_cur_u64(&c);
        z->spn_len = nm_cur_u64(&c);
        z->scc_off = nm_cur_u64(&c);
        z->scc_len = nm_cur_u64(&c);
        z->wal_off = nm_cur_u64(&c);
        z->wal_len = nm_cur_u64(&c);
        if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "%s: FZON: zone '%s': truncated", name, z->name);
        if (z->spn_off > f->spn_size || z->spn_len > f->spn_size - z->spn_off ||
            z->scc_off > f->scc_size || z->scc_len > f->scc_size - z->scc_off ||
            z->wal_off > f->wal_size || z->wal_len > f->wal_size - z->wal_off)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: FZON: zone '%s': FSPN/FSCC/FWAL range past its section",
                           name, z->name);
        if ((uint64_t)z->tile_count * 16u > z->spn_len)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: FZON: zone '%s': %u tiles past its FSPN block", name,
                           z->name, z->tile_count);
    }
    return nm_cur_done(&c, "FZON", err);
}

/* A FSPN tile table entry of FZON zone z. */
static void spn_entry(const nm_bnvf *f, const nm_bnvf_zone *z, uint32_t t, uint32_t *records,
                      uint64_t *off, uint32_t *len)
{
    nm_cursor all = nm_cur(f->bytes, f->size);
    nm_cursor c = nm_cur_slice(&all, f->spn_at + z->spn_off + (uint64_t)t * 16u, 16);
    *records = nm_cur_u32(&c);
    *off = nm_cur_u64(&c);
    *len = nm_cur_u32(&c);
}

static int check_zones(nm_bnvf *f, const nm_bgrd *g, const char *name, nm_error *err)
{
    uint32_t n = g ? g->zone_count : 0;
    f->zone_of_bgrd = (int32_t *)nm_calloc(n ? n : 1, sizeof *f->zone_of_bgrd);
    if (!f->zone_of_bgrd) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    f->bgrd_zone_count = n;
    for (uint32_t bz = 0; bz < n; bz++) {
        const nm_bgrd_zone *gz = &g->zones[bz];
        int32_t found = -1;
        for (uint32_t i = 0; i < f->zone_count; i++) /* equal names: the last wins */
            if (f->zones[i].name_len == gz->name_len && memcmp(f->zones[i].name, gz->name, gz->name_len) == 0)
                found = (int32_t)i;
        if (found < 0)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: check 6 (zones): zone '%s' of the grid is missing", name,
                           gz->name);
        nm_bnvf_zone *z = &f->zones[found];
        if (z->global_regions != gz->global_regions)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: check 6 (zones): zone '%s': %u regions, grid has %u", name,
                           gz->name, z->global_regions, gz->global_regions);
        if (z->tile_count != gz->tile_count)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: check 6 (zones): zone '%s': %u tiles, grid has %u", name,
                           gz->name, z->tile_count, gz->tile_count);
        uint64_t total = 0;
        for (uint32_t t = 0; t < z->tile_count; t++) {
            uint32_t rec, len;
            uint64_t off;
            spn_entry(f, z, t, &rec, &off, &len);
            if (rec != gz->tiles[t].records)
                return nm_fail(err, NM_ERR_CORRUPT,
                               "%s: check 6 (zones): zone '%s': tile %u: %u records, grid has %u", name,
                               gz->name, t, rec, gz->tiles[t].records);
            if (off > z->spn_len || len > z->spn_len - off)
                return nm_fail(err, NM_ERR_CORRUPT, "%s: FSPN: zone '%s': tile %u: payload past the zone block",
                               name, gz->name, t);
            total += rec;
        }
        z->bgrd_zone = (int32_t)bz;
        z->records = total;
        f->zone_of_bgrd[bz] = found;
    }
    return NM_OK;
}

/* FLNK / FOPN share a frame: header 16 (count, u16 version 1, zone_count), zone index of 12-byte
 * entries, fixed-size records. */
static int parse_table(const nm_bnvf *f, const sect *s, const char *tag, size_t rec_size,
                       const char *name, nm_cursor *recs, uint32_t *count, nm_bnvf_range **zones,
                       uint32_t *zone_count, nm_error *err)
{
    nm_cursor all = nm_cur(f->bytes, f->size);
    nm_cursor c = nm_cur_slice(&all, s->at, s->size);
    *count = nm_cur_u32(&c);
    uint16_t version = nm_cur_u16(&c);
    (void)nm_cur_u16(&c);
    *zone_count = nm_cur_u32(&c);
    (void)nm_cur_u32(&c);
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "%s: %s: header truncated", name, tag);
    if (version != 1) return nm_fail(err, NM_ERR_CORRUPT, "%s: %s: version %u (reads 1)", name, tag, version);
    if ((uint64_t)*zone_count * 12u + (uint64_t)*count * rec_size != nm_cur_left(&c))
        return nm_fail(err, NM_ERR_CORRUPT, "%s: %s: %u zones and %u records do not fill %llu bytes", name, tag,
                       *zone_count, *count, (unsigned long long)s->size);
    *zones = (nm_bnvf_range *)nm_calloc(*zone_count ? *zone_count : 1, sizeof **zones);
    if (!*zones) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    for (uint32_t i = 0; i < *zone_count; i++) {
        (*zones)[i].zone_id = nm_cur_u16(&c);
        (void)nm_cur_u16(&c);
        (*zones)[i].first = nm_cur_u32(&c);
        (*zones)[i].len = nm_cur_u32(&c);
        if ((*zones)[i].first > *count || (*zones)[i].len > *count - (*zones)[i].first)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: %s: zone index %u past the records", name, tag, i);
    }
    *recs = nm_cur_sub(&c, (size_t)*count * rec_size);
    return NM_OK;
}

static void read_side(nm_cursor *c, nm_bnvf_link_side *s)
{
    s->gx = nm_cur_i32(c);
    s->gy = nm_cur_i32(c);
    s->h = nm_cur_f32(c);
    s->decl_h = nm_cur_f32(c);
    s->rid = nm_cur_u32(c);
    s->clr = nm_cur_u16(c);
    s->flags = nm_cur_u8(c);
    s->why = nm_cur_u8(c);
}

static int parse_flnk(nm_bnvf *f, const sect *s, const char *name, nm_error *err)
{
    nm_cursor c;
    int rc = parse_table(f, s, "FLNK", NM_BNVF_LINK_SIZE, name, &c, &f->link_count, &f->link_zones,
                         &f->link_zone_count, err);
    if (rc) return rc;
    f->links = (nm_bnvf_link *)nm_calloc(f->link_count ? f->link_count : 1, sizeof *f->links);
    if (!f->links) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    for (uint32_t i = 0; i < f->link_count; i++) {
        nm_bnvf_link *l = &f->links[i];
        l->boml_index = nm_cur_u32(&c);
        l->zone_id = nm_cur_u16(&c);
        l->kind = nm_cur_u8(&c);
        l->valid = nm_cur_u8(&c);
        l->is_ext = nm_cur_i32(&c);
        l->bidirectional = nm_cur_i32(&c);
        l->area = nm_cur_i32(&c);
        l->link_type = nm_cur_u16(&c);
        l->direction = nm_cur_u8(&c);
        (void)nm_cur_u8(&c);
        l->radius = nm_cur_f32(&c);
        l->cost_modifier = nm_cur_f32(&c);
        read_side(&c, &l->lo);
        read_side(&c, &l->hi);
        if (l->lo.why > 4 || l->hi.why > 4)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: FLNK: record %u: reason code %u/%u", name, i, l->lo.why,
                           l->hi.why);
    }
    return nm_cur_done(&c, "FLNK records", err);
}

static int open_cmp(const nm_bnvf_open *a, const nm_bnvf_open *b)
{
    if (a->gy != b->gy) return a->gy < b->gy ? -1 : 1;
    if (a->gx != b->gx) return a->gx < b->gx ? -1 : 1;
    uint32_t ha, hb; /* raw bits compared as unsigned: a negative height sorts after positives */
    memcpy(&ha, &a->h, 4);
    memcpy(&hb, &b->h, 4);
    return ha < hb ? -1 : ha > hb;
}

static int parse_fopn(nm_bnvf *f, const sect *s, const char *name, nm_error *err)
{
    nm_cursor c;
    int rc = parse_table(f, s, "FOPN", NM_BNVF_OPEN_SIZE, name, &c, &f->open_count, &f->open_zones,
                         &f->open_zone_count, err);
    if (rc) return rc;
    f->opens = (nm_bnvf_open *)nm_calloc(f->open_count ? f->open_count : 1, sizeof *f->opens);
    if (!f->opens) return nm_fail(err, NM_ERR_NOMEM, "%s: out of memory", name);
    for (uint32_t i = 0; i < f->open_count; i++) {
        nm_bnvf_open *o = &f->opens[i];
        o->gx = nm_cur_i32(&c);
        o->gy = nm_cur_i32(&c);
        o->h = nm_cur_f32(&c);
        o->clr = nm_cur_u16(&c);
        o->flags = nm_cur_u8(&c);
        o->src = nm_cur_u8(&c);
    }
    if ((rc = nm_cur_done(&c, "FOPN records", err))) return rc;
    for (uint32_t zi = 0; zi < f->open_zone_count; zi++) {
        const nm_bnvf_range *r = &f->open_zones[zi];
        for (uint32_t i = r->first + 1; i < r->first + r->len; i++)
            if (open_cmp(&f->opens[i - 1], &f->opens[i]) >= 0)
                return nm_fail(err, NM_ERR_CORRUPT, "%s: FOPN: zone id %u: record %u out of (gy, gx, h) order",
                               name, r->zone_id, i);
    }
    return NM_OK;
}

int nm_bnvf_parse(const uint8_t *data, size_t size, const char *name, uint64_t build_hash,
                  uint64_t fnv, const nm_bgrd *grid, nm_bnvf *out, nm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "BNVF";
    out->bytes = data;
    out->size = size;
    nm_cursor c = nm_cur(data, size);
    int rc;
    /* 1. magic and version */
    const uint8_t *magic = nm_cur_bytes(&c, 4);
    out->version = nm_cur_u16(&c);
    if (!magic || memcmp(magic, "BNVF", 4) != 0 || c.bad)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: check 1 (magic): not a BNVF file", name);
    if (out->version != NM_BNVF_VERSION)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: check 1 (version): version %u, reads %d", name, out->version,
                       NM_BNVF_VERSION);
    out->flags = nm_cur_u16(&c);
    out->build_hash = nm_cur_u64(&c);
    out->fnv = nm_cur_u64(&c);
    out->rules = nm_cur_u32(&c);
    uint32_t nsec = nm_cur_u32(&c);
    uint64_t dir = nm_cur_u64(&c);
    (void)nm_cur_u64(&c); /* bytes 40..47: unused */
    if (c.bad) return nm_fail(err, NM_ERR_CORRUPT, "%s: header truncated", name);
    /* 2. bound to this main pack */
    if (out->build_hash != build_hash)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: check 2 (build_hash): %016llx, main pack has %016llx", name,
                       (unsigned long long)out->build_hash, (unsigned long long)build_hash);
    if (out->fnv != fnv)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: check 2 (fnv): %016llx, main pack has %016llx", name,
                       (unsigned long long)out->fnv, (unsigned long long)fnv);
    /* 3. rule revision */
    if (out->rules != NM_BNVF_RULES)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: check 3 (rules): revision %u, this build runs %d", name,
                       out->rules, NM_BNVF_RULES);
    /* Section directory: every entry inside the file; duplicates: the last wins. */
    nm_cursor d = nm_cur_slice(&c, dir, (uint64_t)nsec * NM_BNVF_ENTRY_SIZE);
    if (d.bad || nsec > size / NM_BNVF_ENTRY_SIZE)
        return nm_fail(err, NM_ERR_CORRUPT, "%s: section directory (%u entries) past the file", name, nsec);
    sect s[S_COUNT];
    memset(s, 0, sizeof s);
    for (uint32_t i = 0; i < nsec; i++) {
        const uint8_t *tag = nm_cur_bytes(&d, 4);
        (void)nm_cur_u32(&d);
        uint64_t off = nm_cur_u64(&d), len = nm_cur_u64(&d);
        if (d.bad || off > size || len > size - off)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: section %u past the file", name, i);
        for (int k = 0; k < S_COUNT; k++)
            if (memcmp(tag, k_tags[k], 4) == 0) s[k] = (sect){true, off, len};
    }
    /* 4. the five required sections */
    for (int k = 0; k <= S_FWAL; k++)
        if (!s[k].have)
            return nm_fail(err, NM_ERR_CORRUPT, "%s: check 4 (sections): %s missing", name, k_tags[k]);
    /* 5. FCON byte for byte */
    uint8_t want[NM_BNVF_FCON_SIZE];
    nm_bnvf_fcon(want);
    if (s[S_FCON].size != NM_BNVF_FCON_SIZE || memcmp(data + s[S_FCON].at, want, NM_BNVF_FCON_SIZE) != 0) {
        size_t at = 0;
        if (s[S_FCON].size == NM_BNVF_FCON_SIZE)
            while (at < NM_BNVF_FCON_SIZE && data[s[S_FCON].at + at] == want[at]) at++;
        return nm_fail(err, NM_ERR_CORRUPT, "%s: check 5 (FCON): %s", name,
                       s[S_FCON].size != NM_BNVF_FCON_SIZE ? "not 144 bytes"
                       : at < 120 ? "a rule constant (f64) differs from this build's"
                                  : "a rule constant (i32) differs from this build's");
    }
    out->spn_at = s[S_FSPN].at;
    out->spn_size = s[S_FSPN].size;
    out->scc_at = s[S_FSCC].at;
    out->scc_size = s[S_FSCC].size;
    out->wal_at = s[S_FWAL].at;
    out->wal_size = s[S_FWAL].size;
    /* 6. zones against the grid */
    if ((rc = parse_fzon(out, s, name, err)) || (rc = check_zones(out, grid, name, err)) ||
        (s[S_FLNK].have && (rc = parse_flnk(out, &s[S_FLNK], name, err))) ||
        (s[S_FOPN].have && (rc = parse_fopn(out, &s[S_FOPN], name, err)))) {
        nm_bnvf_free(out);
        return rc;
    }
    return NM_OK;
}

int nm_bnvf_load(const char *path, uint64_t build_hash, uint64_t fnv, const nm_bgrd *grid,
                 nm_bnvf *out, nm_error *err)
{
    uint8_t *data = NULL;
    size_t size = 0;
    memset(out, 0, sizeof *out);
    int rc = nm_file_read(path, 0, &data, &size, err);
    if (rc) return rc;
    rc = nm_bnvf_parse(data, size, path, build_hash, fnv, grid, out, err);
    if (rc) {
        nm_free(data);
        return rc;
    }
    out->owned = data;
    return NM_OK;
}

/* ---- FSPN: merging a tile's columns (合并进格图记录) ---------------------------------------------- */

int nm_bnvf_merge_tile(const nm_bnvf *f, uint32_t bgrd_zone, uint32_t tile,
                       const nm_grid_rec *recs, size_t n, nm_bytes scratch[6],
                       nm_span_fields *out, nm_error *err)
{
    size_t nout;
    return nm_bnvf_merge_tile_kept(f, bgrd_zone, tile, recs, n, scratch, NULL, out, &nout, err);
}

int nm_bnvf_merge_tile_kept(const nm_bnvf *f, uint32_t bgrd_zone, uint32_t tile,
                            const nm_grid_rec *recs, size_t n, nm_bytes scratch[6],
                            const nm_bnvf_keep *keep, nm_span_fields *out, size_t *nout,
                            nm_error *err)
{
    *nout = 0;
    if (bgrd_zone >= f->bgrd_zone_count || f->zone_of_bgrd[bgrd_zone] < 0)
        return nm_fail(err, NM_ERR_ARG, "BNVF: no fields for grid zone %u", bgrd_zone);
    const nm_bnvf_zone *z = &f->zones[f->zone_of_bgrd[bgrd_zone]];
    if (tile >= z->tile_count) return nm_fail(err, NM_ERR_ARG, "BNVF: zone '%s': no tile %u", z->name, tile);
    uint32_t records, len;
    uint64_t off;
    spn_entry(f, z, tile, &records, &off, &len);
    if (records != n)
        return nm_fail(err, NM_ERR_CORRUPT, "BNVF: FSPN: zone '%s': tile %u: %u records, grid tile has %zu",
                       z->name, tile, records, n);
    if (n == 0) return NM_OK; /* empty tiles are skipped */
    nm_cursor all = nm_cur(f->bytes, f->size);
    nm_cursor c = nm_cur_slice(&all, f->spn_at + z->spn_off + off, len);
    uint64_t n2 = nm_cur_varint(&c);
    if (c.bad || n2 != n)
        return nm_fail(err, NM_ERR_CORRUPT, "BNVF: FSPN: zone '%s': tile %u: record count %llu, expected %zu",
                       z->name, tile, (unsigned long long)n2, n);
    static const char *const col[6] = {"scc", "steps2x", "seg", "tax", "clr2d", "medial"};
    size_t got[6];
    for (int k = 0; k < 6; k++) {
        bool bytes = k != 0 && k != 4;
        int rc = bytes ? nm_stream_decode_exact(&c, &scratch[k], n, err)
                       : nm_stream_decode(&c, &scratch[k], n > SIZE_MAX / 10 ? SIZE_MAX : n * 10, &got[k], err);
        if (rc) {
            nm_error_prefix(err, "BNVF: FSPN: zone '%s': tile %u: column %s", z->name, tile, col[k]);
            return rc;
        }
        if (bytes) got[k] = n;
    }
    if (nm_cur_left(&c))
        return nm_fail(err, NM_ERR_CORRUPT, "BNVF: FSPN: zone '%s': tile %u: %zu bytes after the columns",
                       z->name, tile, nm_cur_left(&c));
    nm_cursor cs = nm_cur(scratch[0].p, got[0]);
    nm_cursor cc = nm_cur(scratch[4].p, got[4]);
    int64_t scc = 0;
    nm_cell_rows rows = {keep ? keep->tnx : 1, 0, 0};
    for (size_t i = 0; i < n; i++) {
        scc += nm_unzig(nm_cur_varint(&cs));
        uint64_t d = nm_cur_varint(&cc);
        if (cs.bad || scc < 0 || (uint64_t)scc > z->records)
            return nm_fail(err, NM_ERR_CORRUPT, "BNVF: FSPN: zone '%s': tile %u: record %zu: scc bad", z->name,
                           tile, i);
        /* Clearance only ever shrinks when wall edges count: clr2d above clr is a broken sidecar. */
        if (cc.bad || d > recs[i].clr)
            return nm_fail(err, NM_ERR_CORRUPT,
                           "BNVF: FSPN: zone '%s': tile %u: record %zu: clr2d %llu > clr %u", z->name, tile,
                           i, (unsigned long long)d, recs[i].clr);
        if (keep && !nm_bnvf_keeps(keep, &rows, (uint32_t)recs[i].cell)) continue;
        nm_span_fields *o = &out[(*nout)++];
        o->scc = (uint32_t)scc;
        o->clr2 = (uint16_t)(recs[i].clr - d);
        uint8_t main = recs[i].steps, judged = (uint8_t)(scratch[1].p[i] ^ main), st = 0;
        for (int dir = 0; dir < 4; dir++) {
            uint8_t m = (uint8_t)(3u << (2 * dir));
            if (main & m) st |= (uint8_t)(judged & m); /* both main bits 0: direction skipped */
        }
        o->steps2 = st;
        o->seg = scratch[2].p[i];
        o->tax = scratch[3].p[i];
        o->medial = scratch[5].p[i];
        o->pad[0] = o->pad[1] = 0;
    }
    int rc;
    if ((rc = nm_cur_done(&cs, "FSPN scc column", err)) || (rc = nm_cur_done(&cc, "FSPN clr2d column", err)))
        nm_error_prefix(err, "BNVF: zone '%s': tile %u", z->name, tile);
    return rc;
}

/* ---- FSCC and FWAL (可达域, 边界边保留表) --------------------------------------------------------- */

void nm_bnvf_zone_data_free(nm_bnvf_zone_data *d)
{
    if (!d) return;
    for (uint32_t i = 0; i < d->dag_count; i++) {
        nm_free(d->dags[i].row);
        nm_free(d->dags[i].dst);
    }
    nm_free(d->dags);
    nm_free(d->wall_keys);
    nm_free(d->wall_row);
    nm_free(d->wall_rids);
    memset(d, 0, sizeof *d);
}

static int load_fscc(const nm_bnvf *f, const nm_bnvf_zone *z, nm_bnvf_zone_data *out, nm_error *err)
{
    nm_cursor all = nm_cur(f->bytes, f->size);
    nm_cursor c = nm_cur_slice(&all, f->scc_at + z->scc_off, z->scc_len);
    uint64_t nr = nm_cur_varint(&c);
    if (c.bad || nr > nm_cur_left(&c) / 4 || nr > (uint64_t)z->global_regions + 1)
        return nm_fail(err, NM_ERR_CORRUPT, "FSCC: zone '%s': region count bad", z->name);
    out->dags = (nm_bnvf_dag *)nm_calloc(nr ? (size_t)nr : 1, sizeof *out->dags);
    if (!out->dags) return nm_fail(err, NM_ERR_NOMEM, "FSCC: out of memory");
    nm_bytes buf = {0};
    int rc = NM_OK;
    for (uint64_t r = 0; r < nr && !rc; r++) {
        nm_bnvf_dag *g = &out->dags[r];
        g->rid = nm_cur_varint32(&c);
        uint64_t n_scc = nm_cur_varint(&c), n_edges = nm_cur_varint(&c);
        if (f->flags & 1)
            for (int k = 0; k < 4; k++) (void)nm_cur_varint(&c);
        out->dag_count = (uint32_t)r + 1;
        if (c.bad || g->rid > z->global_regions || (r > 0 && g->rid <= out->dags[r - 1].rid) || n_scc < 1 ||
            n_scc > z->records) {
            rc = nm_fail(err, NM_ERR_CORRUPT, "FSCC: zone '%s': region %llu: rid / component count bad", z->name,
                         (unsigned long long)r);
            break;
        }
        g->n_scc = (uint32_t)n_scc;
        size_t got = 0;
        uint64_t bound = n_edges * 20u;
        if (n_edges > UINT32_MAX || (rc = nm_stream_decode(&c, &buf, (size_t)bound, &got, err))) {
            if (!rc) rc = nm_fail(err, NM_ERR_CORRUPT, "FSCC: too many edges");
            nm_error_prefix(err, "FSCC: zone '%s': rid %u", z->name, g->rid);
            break;
        }
        if (got < 2 * n_edges) {
            rc = nm_fail(err, NM_ERR_CORRUPT, "FSCC: zone '%s': rid %u: edge stream too short", z->name, g->rid);
            break;
        }
        g->row = (uint32_t *)nm_calloc((size_t)n_scc + 1, sizeof *g->row);
        g->dst = (uint32_t *)nm_malloc((n_edges ? (size_t)n_edges : 1) * sizeof *g->dst);
        if (!g->row || !g->dst) {
            rc = nm_fail(err, NM_ERR_NOMEM, "FSCC: out of memory");
            break;
        }
        /* Edges (src delta, dst) ascending by (src, dst): count per src into the CSR rows. */
        nm_cursor e = nm_cur(buf.p, got);
        uint64_t src = 0, prev_dst = 0;
        for (uint64_t k = 0; k < n_edges; k++) {
            uint64_t ds = nm_cur_varint(&e), dst = nm_cur_varint(&e);
            src += ds;
            if (e.bad || ds > n_scc || src < 1 || src > n_scc || dst < 1 || dst > n_scc ||
                (k > 0 && ds == 0 && dst <= prev_dst)) {
                rc = nm_fail(err, NM_ERR_CORRUPT, "FSCC: zone '%s': rid %u: edge %llu bad or out of order", z->name,
                             g->rid, (unsigned long long)k);
                break;
            }
            prev_dst = dst;
            g->row[src]++;
            g->dst[k] = (uint32_t)dst;
        }
        if (rc) break;
        for (uint32_t k = 1; k <= g->n_scc; k++) g->row[k] += g->row[k - 1];
        if ((rc = nm_cur_done(&e, "FSCC edge stream", err))) nm_error_prefix(err, "zone '%s'", z->name);
    }
    nm_bytes_free(&buf);
    if (!rc && (rc = nm_cur_done(&c, "FSCC zone block", err))) nm_error_prefix(err, "zone '%s'", z->name);
    return rc;
}

static int load_fwal(const nm_bnvf *f, const nm_bnvf_zone *z, nm_bnvf_zone_data *out, nm_error *err)
{
    nm_cursor all = nm_cur(f->bytes, f->size);
    nm_cursor c = nm_cur_slice(&all, f->wal_at + z->wal_off, z->wal_len);
    uint64_t nw = nm_cur_varint(&c);
    if (c.bad || nw > UINT32_MAX - 1)
        return nm_fail(err, NM_ERR_CORRUPT, "FWAL: zone '%s': wall count bad", z->name);
    nm_bytes a = {0}, b = {0};
    size_t ga = 0, gb = 0;
    int rc = nm_stream_decode(&c, &a, nw > SIZE_MAX / 10 ? SIZE_MAX : (size_t)nw * 10, &ga, err);
    if (!rc) rc = nm_stream_decode(&c, &b, SIZE_MAX / 2, &gb, err);
    if (rc) {
        nm_error_prefix(err, "FWAL: zone '%s'", z->name);
        goto done;
    }
    if (ga < nw || gb < nw) {
        rc = nm_fail(err, NM_ERR_CORRUPT, "FWAL: zone '%s': streams shorter than %llu walls", z->name,
                     (unsigned long long)nw);
        goto done;
    }
    out->wall_count = (uint32_t)nw;
    out->wall_keys = (uint64_t *)nm_malloc((nw ? (size_t)nw : 1) * sizeof *out->wall_keys);
    out->wall_row = (uint32_t *)nm_calloc((size_t)nw + 1, sizeof *out->wall_row);
    out->wall_rids = (uint32_t *)nm_malloc((gb ? gb : 1) * sizeof *out->wall_rids); /* >= 1 byte each */
    if (!out->wall_keys || !out->wall_row || !out->wall_rids) {
        rc = nm_fail(err, NM_ERR_NOMEM, "FWAL: out of memory");
        goto done;
    }
    nm_cursor ca = nm_cur(a.p, ga), cb = nm_cur(b.p, gb);
    uint64_t key = 0;
    size_t nr = 0;
    for (uint64_t w = 0; w < nw; w++) {
        uint64_t dk = nm_cur_varint(&ca);
        if (ca.bad || dk > UINT64_MAX - key) {
            rc = nm_fail(err, NM_ERR_CORRUPT, "FWAL: zone '%s': key %llu bad", z->name, (unsigned long long)w);
            goto done;
        }
        key += dk;
        out->wall_keys[w] = key;
        uint64_t cnt = nm_cur_varint(&cb), rid = 0;
        if (cb.bad || cnt > nm_cur_left(&cb)) {
            rc = nm_fail(err, NM_ERR_CORRUPT, "FWAL: zone '%s': wall %llu: region count bad", z->name,
                         (unsigned long long)w);
            goto done;
        }
        for (uint64_t k = 0; k < cnt; k++) {
            rid += nm_cur_varint(&cb);
            if (cb.bad || rid > z->global_regions) {
                rc = nm_fail(err, NM_ERR_CORRUPT, "FWAL: zone '%s': wall %llu: region bad", z->name,
                             (unsigned long long)w);
                goto done;
            }
            out->wall_rids[nr++] = (uint32_t)rid;
        }
        out->wall_row[w + 1] = (uint32_t)nr;
    }
    if ((rc = nm_cur_done(&ca, "FWAL key stream", err)) || (rc = nm_cur_done(&cb, "FWAL region stream", err)) ||
        (rc = nm_cur_done(&c, "FWAL zone block", err)))
        nm_error_prefix(err, "zone '%s'", z->name);
done:
    nm_bytes_free(&a);
    nm_bytes_free(&b);
    return rc;
}

int nm_bnvf_zone_load(const nm_bnvf *f, uint32_t fzon_zone, nm_bnvf_zone_data *out,
                      nm_error *err)
{
    memset(out, 0, sizeof *out);
    if (fzon_zone >= f->zone_count) return nm_fail(err, NM_ERR_ARG, "BNVF: no zone %u", fzon_zone);
    const nm_bnvf_zone *z = &f->zones[fzon_zone];
    int rc = load_fscc(f, z, out, err);
    if (!rc) rc = load_fwal(f, z, out, err);
    if (rc) nm_bnvf_zone_data_free(out);
    return rc;
}

const nm_bnvf_dag *nm_bnvf_dag_of(const nm_bnvf_zone_data *d, uint32_t rid)
{
    uint32_t lo = 0, hi = d->dag_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (d->dags[mid].rid < rid) lo = mid + 1; else hi = mid;
    }
    return lo < d->dag_count && d->dags[lo].rid == rid ? &d->dags[lo] : NULL;
}

uint32_t nm_bnvf_reach_from(const nm_bnvf_dag *d, uint32_t seed, uint8_t *mark, uint32_t *stack,
                            uint32_t *list)
{
    if (seed < 1 || seed > d->n_scc) return 0;
    memset(mark, 0, (size_t)d->n_scc + 1);
    uint32_t top = 0, n = 0;
    stack[top++] = seed;
    mark[seed] = 1;
    while (top) {
        uint32_t c = stack[--top];
        list[n++] = c;
        for (uint32_t e = d->row[c - 1]; e < d->row[c]; e++) {
            uint32_t t = d->dst[e];
            if (!mark[t]) {
                mark[t] = 1;
                stack[top++] = t; /* each component is pushed once: top <= n_scc */
            }
        }
    }
    return n;
}

int nm_bnvf_wall_kept(const nm_bnvf_zone_data *d, uint64_t key, uint32_t rid, bool *kept,
                      nm_error *err)
{
    *kept = false;
    uint32_t lo = 0, hi = d->wall_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (d->wall_keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    if (lo >= d->wall_count || d->wall_keys[lo] != key)
        return nm_fail(err, NM_ERR_CORRUPT,
                       "FWAL: wall %llu (triangle %llu, edge %u) not in the table: sidecar and zone mesh disagree",
                       (unsigned long long)key, (unsigned long long)(key / 3), (unsigned)(key % 3));
    uint32_t a = d->wall_row[lo], b = d->wall_row[lo + 1];
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (d->wall_rids[mid] < rid) a = mid + 1; else b = mid;
    }
    *kept = a < d->wall_row[lo + 1] && d->wall_rids[a] == rid;
    return NM_OK;
}

const nm_bnvf_open *nm_bnvf_find_open(const nm_bnvf *f, uint16_t zone_id, int32_t gx,
                                      int32_t gy, float h)
{
    for (uint32_t zi = 0; zi < f->open_zone_count; zi++) {
        const nm_bnvf_range *r = &f->open_zones[zi];
        if (r->zone_id != zone_id) continue;
        nm_bnvf_open key = {gx, gy, h, 0, 0, 0};
        uint32_t lo = r->first, hi = r->first + r->len;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (open_cmp(&f->opens[mid], &key) < 0) lo = mid + 1; else hi = mid;
        }
        if (lo < r->first + r->len && open_cmp(&f->opens[lo], &key) == 0) return &f->opens[lo];
    }
    return NULL;
}

/* ---- writing ------------------------------------------------------------------------------------- */

int nm_bnvf_encode_spn_tile(const nm_grid_rec *recs, const uint32_t *scc, const uint8_t *steps2x,
                            const uint8_t *seg, const uint8_t *tax, const uint16_t *clr2d,
                            const uint8_t *medial, size_t n, int level, nm_buf *out, nm_error *err)
{
    nm_buf_varint(out, n);
    if (!n) return NM_OK;
    nm_buf sv = {0}, cv = {0}; /* the two varint columns; the byte columns are streamed as they are */
    int rc = NM_OK;
    int64_t prev = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (clr2d[i] > recs[i].clr) {
            rc = nm_fail(err, NM_ERR_ARG, "BNVF: tile record %zu: clr2d %u > clr %u", i, clr2d[i], recs[i].clr);
            break;
        }
        nm_buf_varint(&sv, nm_zig((int64_t)scc[i] - prev));
        prev = scc[i];
        nm_buf_varint(&cv, clr2d[i]);
    }
    if (!rc && (sv.oom || cv.oom)) rc = nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
    const void *col[6] = {sv.p, steps2x, seg, tax, cv.p, medial};
    const size_t len[6] = {sv.size, n, n, n, cv.size, n};
    for (int k = 0; k < 6 && !rc; k++) rc = nm_stream_encode(out, col[k], len[k], level, err);
    nm_buf_free(&sv);
    nm_buf_free(&cv);
    return rc;
}

/* Per tile record, its zone record's sidecar columns gathered in tile order. */
typedef struct spn_cols {
    uint32_t *scc;
    uint16_t *clr2d;
    uint8_t *b[4]; /* steps2x, seg, tax, medial */
    size_t cap;
} spn_cols;

static bool spn_gather(const nm_bnvf_zone_src *zs, const uint32_t *idx, size_t n, spn_cols *c)
{
    if (n > c->cap) {
        size_t nc = n * 2;
        uint32_t *s = nm_realloc(c->scc, nc * sizeof *s);
        if (s) c->scc = s;
        uint16_t *d = nm_realloc(c->clr2d, nc * sizeof *d);
        if (d) c->clr2d = d;
        bool ok = s && d;
        for (int k = 0; k < 4; k++) {
            uint8_t *q = nm_realloc(c->b[k], nc);
            if (q) c->b[k] = q;
            ok = ok && q;
        }
        if (!ok) return false;
        c->cap = nc;
    }
    const uint8_t *src[4] = {zs->steps2x, zs->seg, zs->tax, zs->medial};
    for (size_t i = 0; i < n; i++) {
        c->scc[i] = zs->scc[idx[i]];
        c->clr2d[i] = zs->clr2d[idx[i]];
        for (int k = 0; k < 4; k++) c->b[k][i] = src[k][idx[i]];
    }
    return true;
}

static int write_spn_zone(const nm_bnvf_zone_src *zs, const nm_bgrd_write_opts *tiling, int level,
                          nm_buf *out, uint32_t *tile_count, nm_error *err)
{
    const nm_grid_zone_src *gz = zs->grid;
    uint32_t tc = 0;
    int rc = nm_bgrd_zone_tiling(gz, tiling, NULL, &tc, err);
    if (rc) return rc;
    *tile_count = tc;
    const nm_grid_tiles *et = gz->tiles;
    int32_t T = tiling && tiling->tile_cells > 0 ? tiling->tile_cells : NM_BGRD_TILE_CELLS;
    int32_t A = tiling && tiling->apron_cells != 0 ? (tiling->apron_cells < 0 ? 0 : tiling->apron_cells)
                                                   : NM_BGRD_APRON_CELLS;
    if (et && (et->count != tc || level != NM_GRID_LEVEL || T != NM_BGRD_TILE_CELLS || A != NM_BGRD_APRON_CELLS))
        return nm_fail(err, NM_ERR_ARG, "BNVF: zone '%s': encoded tiles need the default tiling and level", gz->name);
    nm_bgrd_tile *tiles = (nm_bgrd_tile *)nm_calloc(tc ? tc : 1, sizeof *tiles);
    nm_grid_rec *recs = NULL;
    uint32_t *idx = NULL;
    size_t cap = 0, n = 0;
    spn_cols cols;
    memset(&cols, 0, sizeof cols);
    if (!tiles) return nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
    if ((rc = nm_bgrd_zone_tiling(gz, tiling, tiles, &tc, err))) goto done;
    size_t block = out->size;
    nm_buf_zeros(out, (size_t)tc * 16);
    for (uint32_t t = 0; t < tc; t++) {
        size_t at = out->size;
        if (et) { /* encoded by the bake: copied as it is */
            n = et->records[t];
            nm_buf_bytes(out, et->fields[t].p, et->fields[t].size);
        } else {
            if ((rc = nm_bgrd_gather_tile(gz, &tiles[t], &recs, &idx, &cap, &n, err))) goto done;
            if (!spn_gather(zs, idx, n, &cols)) {
                rc = nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
                goto done;
            }
            rc = nm_bnvf_encode_spn_tile(recs, cols.scc, cols.b[0], cols.b[1], cols.b[2], cols.clr2d, cols.b[3], n,
                                         level, out, err);
            if (rc) {
                nm_error_prefix(err, "BNVF: zone '%s': tile %u", gz->name, t);
                goto done;
            }
        }
        size_t p = block + (size_t)t * 16;
        nm_buf_put_u32(out, p, (uint32_t)n);
        nm_buf_put_u64(out, p + 4, at - block);
        nm_buf_put_u32(out, p + 12, (uint32_t)(out->size - at));
    }
done:
    nm_free(cols.scc);
    nm_free(cols.clr2d);
    for (int k = 0; k < 4; k++) nm_free(cols.b[k]);
    nm_free(tiles);
    nm_free(recs);
    nm_free(idx);
    return rc;
}

static int write_scc_zone(const nm_bnvf_zone_src *zs, int level, nm_buf *out, nm_error *err)
{
    nm_buf_varint(out, zs->region_count);
    nm_buf e = {0};
    int rc = NM_OK;
    for (uint32_t r = 0; r < zs->region_count && !rc; r++) {
        const nm_bnvf_region_src *g = &zs->regions[r];
        if (g->n_scc < 1 || (r > 0 && g->rid <= zs->regions[r - 1].rid) || g->rid > zs->grid->global_regions) {
            rc = nm_fail(err, NM_ERR_ARG, "BNVF: zone '%s': region %u: rid order or component count", zs->grid->name, r);
            break;
        }
        nm_buf_varint(out, g->rid);
        nm_buf_varint(out, g->n_scc);
        nm_buf_varint(out, g->n_edges);
        e.size = 0;
        uint32_t prev = 0;
        for (uint32_t k = 0; k < g->n_edges; k++) {
            uint32_t s = g->edges[2 * k], d = g->edges[2 * k + 1];
            if (s < 1 || s > g->n_scc || d < 1 || d > g->n_scc || s < prev ||
                (k > 0 && s == prev && d <= g->edges[2 * k - 1])) {
                rc = nm_fail(err, NM_ERR_ARG, "BNVF: zone '%s': rid %u: edge %u bad or unsorted", zs->grid->name,
                             g->rid, k);
                break;
            }
            nm_buf_varint(&e, s - prev);
            nm_buf_varint(&e, d);
            prev = s;
        }
        if (!rc) rc = e.oom ? nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory")
                            : nm_stream_encode(out, e.p, e.size, level, err);
    }
    nm_buf_free(&e);
    return rc;
}

static int write_wal_zone(const nm_bnvf_zone_src *zs, int level, nm_buf *out, nm_error *err)
{
    nm_buf a = {0}, b = {0};
    int rc = NM_OK;
    nm_buf_varint(out, zs->wall_count);
    for (uint32_t w = 0; w < zs->wall_count && !rc; w++) {
        if (w > 0 && zs->wall_keys[w] <= zs->wall_keys[w - 1]) {
            rc = nm_fail(err, NM_ERR_ARG, "BNVF: zone '%s': wall keys not ascending at %u", zs->grid->name, w);
            break;
        }
        nm_buf_varint(&a, zs->wall_keys[w] - (w ? zs->wall_keys[w - 1] : 0));
        uint32_t s = zs->wall_row[w], t = zs->wall_row[w + 1];
        if (t < s) {
            rc = nm_fail(err, NM_ERR_ARG, "BNVF: zone '%s': wall %u: bad region row", zs->grid->name, w);
            break;
        }
        nm_buf_varint(&b, t - s);
        for (uint32_t k = s; k < t; k++) {
            if (k > s && zs->wall_rids[k] < zs->wall_rids[k - 1]) {
                rc = nm_fail(err, NM_ERR_ARG, "BNVF: zone '%s': wall %u: regions not ascending", zs->grid->name, w);
                break;
            }
            nm_buf_varint(&b, zs->wall_rids[k] - (k > s ? zs->wall_rids[k - 1] : 0));
        }
    }
    if (!rc && (a.oom || b.oom)) rc = nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
    if (!rc) rc = nm_stream_encode(out, a.p, a.size, level, err);
    if (!rc) rc = nm_stream_encode(out, b.p, b.size, level, err);
    nm_buf_free(&a);
    nm_buf_free(&b);
    return rc;
}

static void write_table_head(nm_buf *o, uint32_t count, const nm_bnvf_range *zones, uint32_t zc)
{
    nm_buf_u32(o, count);
    nm_buf_u16(o, 1);
    nm_buf_u16(o, 0);
    nm_buf_u32(o, zc);
    nm_buf_u32(o, 0);
    for (uint32_t i = 0; i < zc; i++) {
        nm_buf_u16(o, zones[i].zone_id);
        nm_buf_u16(o, 0);
        nm_buf_u32(o, zones[i].first);
        nm_buf_u32(o, zones[i].len);
    }
}

static void write_side(nm_buf *o, const nm_bnvf_link_side *s)
{
    nm_buf_i32(o, s->gx);
    nm_buf_i32(o, s->gy);
    nm_buf_f32(o, s->h);
    nm_buf_f32(o, s->decl_h);
    nm_buf_u32(o, s->rid);
    nm_buf_u16(o, s->clr);
    nm_buf_u8(o, s->flags);
    nm_buf_u8(o, s->why);
}

int nm_bnvf_write(const nm_bnvf_write_src *src, const nm_bgrd_write_opts *tiling, nm_buf *out,
                  nm_error *err)
{
    int level = tiling && tiling->level > 0 ? tiling->level : NM_GRID_LEVEL;
    bool flnk = src->links != NULL, fopn = src->opens != NULL;
    uint32_t nsec = 5 + flnk + fopn;
    size_t base = out->size;
    nm_buf_bytes(out, "BNVF", 4);
    nm_buf_u16(out, NM_BNVF_VERSION);
    nm_buf_u16(out, 0);
    nm_buf_u64(out, src->build_hash);
    nm_buf_u64(out, src->fnv);
    nm_buf_u32(out, NM_BNVF_RULES);
    nm_buf_u32(out, nsec);
    nm_buf_u64(out, NM_BNVF_HEADER_SIZE);
    nm_buf_u64(out, 0);
    size_t dir = out->size;
    nm_buf_zeros(out, (size_t)nsec * NM_BNVF_ENTRY_SIZE);
    uint32_t zc = src->zone_count;
    uint64_t *offs = (uint64_t *)nm_calloc((size_t)(zc ? zc : 1) * 6, sizeof *offs);
    uint32_t *tiles = (uint32_t *)nm_calloc(zc ? zc : 1, sizeof *tiles);
    int rc = NM_OK;
    uint32_t si = 0;
    if (!offs || !tiles) {
        rc = nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
        goto done;
    }
    /* FCON */
    size_t at[7];
    uint8_t fcon[NM_BNVF_FCON_SIZE];
    nm_bnvf_fcon(fcon);
    at[0] = out->size;
    nm_buf_bytes(out, fcon, sizeof fcon);
    /* FSPN, FSCC, FWAL first into their own buffers (FZON needs their offsets). */
    nm_buf spn = {0}, scc = {0}, wal = {0};
    for (uint32_t z = 0; z < zc && !rc; z++) {
        const nm_bnvf_zone_src *zs = &src->zones[z];
        if (!zs->grid || !zs->grid->name) {
            rc = nm_fail(err, NM_ERR_ARG, "BNVF: zone %u has no grid", z);
            break;
        }
        offs[6 * z + 0] = spn.size;
        rc = write_spn_zone(zs, tiling, level, &spn, &tiles[z], err);
        offs[6 * z + 1] = spn.size - offs[6 * z + 0];
        offs[6 * z + 2] = scc.size;
        if (!rc) rc = write_scc_zone(zs, level, &scc, err);
        offs[6 * z + 3] = scc.size - offs[6 * z + 2];
        offs[6 * z + 4] = wal.size;
        if (!rc) rc = write_wal_zone(zs, level, &wal, err);
        offs[6 * z + 5] = wal.size - offs[6 * z + 4];
    }
    if (!rc && (spn.oom || scc.oom || wal.oom)) rc = nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
    if (!rc) {
        at[1] = out->size; /* FZON */
        nm_buf_u32(out, zc);
        for (uint32_t z = 0; z < zc; z++) {
            const nm_grid_zone_src *g = src->zones[z].grid;
            size_t len = strlen(g->name);
            nm_buf_u32(out, (uint32_t)len);
            nm_buf_bytes(out, g->name, len);
            nm_buf_zeros(out, (4 - len % 4) % 4);
            nm_buf_u32(out, g->global_regions);
            nm_buf_u32(out, tiles[z]);
            for (int k = 0; k < 6; k++) nm_buf_u64(out, offs[6 * z + k]);
        }
        at[2] = out->size;
        nm_buf_bytes(out, spn.p, spn.size);
        at[3] = out->size;
        nm_buf_bytes(out, scc.p, scc.size);
        at[4] = out->size;
        nm_buf_bytes(out, wal.p, wal.size);
        at[5] = out->size;
        if (flnk) {
            write_table_head(out, src->link_count, src->link_zones, src->link_zone_count);
            for (uint32_t i = 0; i < src->link_count; i++) {
                const nm_bnvf_link *l = &src->links[i];
                nm_buf_u32(out, l->boml_index);
                nm_buf_u16(out, l->zone_id);
                nm_buf_u8(out, l->kind);
                nm_buf_u8(out, l->valid);
                nm_buf_i32(out, l->is_ext);
                nm_buf_i32(out, l->bidirectional);
                nm_buf_i32(out, l->area);
                nm_buf_u16(out, l->link_type);
                nm_buf_u8(out, l->direction);
                nm_buf_u8(out, 0);
                nm_buf_f32(out, l->radius);
                nm_buf_f32(out, l->cost_modifier);
                write_side(out, &l->lo);
                write_side(out, &l->hi);
            }
        }
        at[6] = out->size;
        if (fopn) {
            for (uint32_t zi = 0; zi < src->open_zone_count && !rc; zi++) {
                const nm_bnvf_range *r = &src->open_zones[zi];
                if (r->first > src->open_count || r->len > src->open_count - r->first) {
                    rc = nm_fail(err, NM_ERR_ARG, "BNVF: FOPN zone %u past the records", zi);
                    break;
                }
                for (uint32_t i = r->first + 1; i < r->first + r->len && !rc; i++)
                    if (open_cmp(&src->opens[i - 1], &src->opens[i]) >= 0)
                        rc = nm_fail(err, NM_ERR_ARG, "BNVF: FOPN record %u out of (gy, gx, h) order", i);
            }
            write_table_head(out, src->open_count, src->open_zones, src->open_zone_count);
            for (uint32_t i = 0; i < src->open_count; i++) {
                const nm_bnvf_open *o = &src->opens[i];
                nm_buf_i32(out, o->gx);
                nm_buf_i32(out, o->gy);
                nm_buf_f32(out, o->h);
                nm_buf_u16(out, o->clr);
                nm_buf_u8(out, o->flags);
                nm_buf_u8(out, o->src);
            }
        }
        size_t end = out->size;
        static const char tags[7][5] = {"FCON", "FZON", "FSPN", "FSCC", "FWAL", "FLNK", "FOPN"};
        for (int k = 0; k < 7 && !rc && !out->oom; k++) {
            if ((k == 5 && !flnk) || (k == 6 && !fopn)) continue;
            size_t stop = end;
            for (int m = k + 1; m < 7; m++)
                if (!((m == 5 && !flnk) || (m == 6 && !fopn))) {
                    stop = at[m];
                    break;
                }
            size_t p = dir + (size_t)si * NM_BNVF_ENTRY_SIZE;
            memcpy(out->p + p, tags[k], 4);
            nm_buf_put_u64(out, p + 8, at[k] - base);
            nm_buf_put_u64(out, p + 16, stop - at[k]);
            si++;
        }
    }
    nm_buf_free(&spn);
    nm_buf_free(&scc);
    nm_buf_free(&wal);
    if (!rc && out->oom) rc = nm_fail(err, NM_ERR_NOMEM, "BNVF: out of memory");
done:
    nm_free(offs);
    nm_free(tiles);
    return rc;
}
