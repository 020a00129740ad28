/*
 * picture_text.c -- the text face of a graph's picture: a layout (layout.c)
 * drawn in box-drawing characters.  It is what print(g) shows and what
 * eagle::GraphView::text() prints, so a Python graph and a C++ one of the
 * same shape give the same picture: there is one drawer.
 *
 * Cells are code points (one column each, as the layout counts them).  The
 * drawing runs in the order that decides what shows where two things meet:
 * boxes, frames (their titles are text), plane names and stage labels (text:
 * a wire passes under it unseen), then the wires, resolved per cell from the
 * directions they leave it in (a box or frame border a wire meets gets a
 * tick), then the long links, dotted, into the cells still blank, each ending
 * in an arrow into its destination.  Trailing blanks of each row are dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum {
    UP = 1,
    DOWN = 2,
    LEFT = 4,
    RIGHT = 8
};

/* A wire cell's character from the directions it leaves in. */
static const uint32_t WIRE[16] = {
    0,      0x2502, 0x2502, 0x2502, 0x2500, 0x2518, 0x2510, 0x2524,
    0x2500, 0x2514, 0x250C, 0x251C, 0x2500, 0x2534, 0x252C, 0x253C,
};
/* A horizontal border a wire meets from above (UP), from below (DOWN), or passes through. */
static const uint32_t TICK[4] = {0, 0x2534, 0x252C, 0x253C};
/* A long link's cell: dotted, rounded at its bends, so it never reads as a wire; 0 where a path
 * leaves a cell three or four ways (a path that meets itself). */
static const uint32_t LONG[16] = {
    0,      0x2506, 0x2506, 0x2506, 0x2504, 0x256F, 0x256E, 0,
    0x2504, 0x2570, 0x256D, 0,      0x2504, 0,      0,      0,
};

#define H_LINE 0x2500
#define V_LINE 0x2502
#define ARROW_RIGHT 0x25B8
#define ARROW_LEFT 0x25C2

typedef struct canvas {
    int32_t w, h;
    uint32_t *cell;   /* w * h code points */
    uint8_t *border;  /* horizontal borders a wire may tick */
    uint8_t *written; /* text: a wire passes under it unseen */
    uint8_t *dirs;    /* the directions the wires (then one long link) leave each cell in */
    int32_t *path;    /* the cells of the long link being drawn */
} canvas;

/* The code points of UTF-8 `s` into out (room for strlen(s)); their count, or -1 when s is not
 * UTF-8. */
static int32_t decode(const char *s, uint32_t *out)
{
    const unsigned char *p = (const unsigned char *)s;
    int32_t n = 0;
    while (*p) {
        uint32_t c = *p++;
        int more = c < 0x80      ? 0
            : (c & 0xE0) == 0xC0 ? 1
            : (c & 0xF0) == 0xE0 ? 2
            : (c & 0xF8) == 0xF0 ? 3
                                 : -1;
        if (more < 0)
            return -1;
        c &= 0x7F >> more;
        for (int k = 0; k < more; ++k, ++p) {
            if ((*p & 0xC0) != 0x80)
                return -1;
            c = c << 6 | (*p & 0x3F);
        }
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return -1;
        out[n++] = c;
    }
    return n;
}

/* A text of the input as code points, in a buffer the caller frees; NULL with *status set. */
static uint32_t *text_of(const char *s, int32_t *len, int *status, const char *what, int32_t k)
{
    if (!s) {
        *status = eagle_fail(EAGLE_ERR_ARG, "eagle_picture_text: %s %d is NULL", what, k);
        return NULL;
    }
    uint32_t *out = malloc((strlen(s) + 1) * sizeof *out);
    if (!out) {
        *status = EAGLE_ERR_NOMEM;
        return NULL;
    }
    *len = decode(s, out);
    if (*len < 0) {
        free(out);
        *status = eagle_fail(EAGLE_ERR_ARG, "eagle_picture_text: %s %d is not UTF-8", what, k);
        return NULL;
    }
    return out;
}

static int inside(const canvas *c, int32_t x, int32_t y, int32_t n)
{
    return y >= 0 && y < c->h && x >= 0 && n >= 0 && x <= c->w - n;
}

static int off_canvas(const char *what, int32_t k)
{
    return eagle_fail(EAGLE_ERR_ARG, "eagle_picture_text: %s %d lies outside the layout's cells",
                      what, k);
}

static void put(canvas *c, int32_t x, int32_t y, const uint32_t *s, int32_t n, int text)
{
    memcpy(&c->cell[(size_t)y * c->w + x], s, (size_t)n * sizeof *s);
    if (text)
        memset(&c->written[(size_t)y * c->w + x], 1, (size_t)n);
}

static void fill(canvas *c, int32_t x, int32_t y, uint32_t ch, int32_t n)
{
    for (int32_t i = 0; i < n; ++i)
        c->cell[(size_t)y * c->w + x + i] = ch;
}

/* A horizontal border from x to x + w: its inner cells may be ticked by a wire. */
static void edge(canvas *c, int32_t x, int32_t y, int32_t w, uint32_t left, uint32_t mid,
                 uint32_t right)
{
    c->cell[(size_t)y * c->w + x] = left;
    fill(c, x + 1, y, mid, w - 2);
    c->cell[(size_t)y * c->w + x + w - 1] = right;
    memset(&c->border[(size_t)y * c->w + x + 1], 1, (size_t)(w - 2));
}

static int draw_box(canvas *c, const eagle_layout_box *b, const uint32_t *text, int32_t n,
                    int dashed, int32_t k)
{
    if (b->w < 2 || !inside(c, b->x, b->y, b->w) || b->y + 2 >= c->h)
        return off_canvas("box", k);
    int32_t inner = b->w - 2, left = (inner - n) / 2;
    if (n > inner)
        return eagle_fail(EAGLE_ERR_ARG,
                          "eagle_picture_text: the text of box %d (node %d) is %d columns, "
                          "wider than the box",
                          k, b->node, n);
    uint32_t h = dashed ? 0x254C : H_LINE, v = dashed ? 0x254E : V_LINE;
    edge(c, b->x, b->y, b->w, 0x250C, h, 0x2510);
    size_t row = (size_t)(b->y + 1) * c->w + b->x;
    c->cell[row] = v;
    fill(c, b->x + 1, b->y + 1, ' ', inner);
    put(c, b->x + 1 + left, b->y + 1, text, n, 0);
    c->cell[row + b->w - 1] = v;
    edge(c, b->x, b->y + 2, b->w, 0x2514, h, 0x2518);
    return EAGLE_OK;
}

static int draw_frame(canvas *c, const eagle_layout_frame *f, const uint32_t *title, int32_t n,
                      int32_t k)
{
    int32_t gap = f->w - 4 - n; /* the border's columns beside " title " */
    if (f->h < 2 || !inside(c, f->x, f->y, f->w) || f->y + f->h > c->h || gap < 0)
        return gap < 0 ? eagle_fail(EAGLE_ERR_ARG,
                                    "eagle_picture_text: the title of frame %d is %d columns, "
                                    "wider than the frame",
                                    k, n)
                       : off_canvas("frame", k);
    int32_t bottom = f->y + f->h - 1, at = f->x + 1 + gap / 2;
    edge(c, f->x, f->y, f->w, 0x256D, H_LINE, 0x256E);
    static const uint32_t space = ' ';
    put(c, at, f->y, &space, 1, 1);
    put(c, at + 1, f->y, title, n, 1);
    put(c, at + 1 + n, f->y, &space, 1, 1);
    for (int32_t y = f->y + 1; y < bottom; ++y) {
        c->cell[(size_t)y * c->w + f->x] = V_LINE;
        c->cell[(size_t)y * c->w + f->x + f->w - 1] = V_LINE;
    }
    edge(c, f->x, bottom, f->w, 0x2570, H_LINE, 0x256F);
    return EAGLE_OK;
}

static int step_of(eagle_layout_point a, eagle_layout_point b, int *ahead, int *back)
{
    if (a.x != b.x && a.y != b.y)
        return -1;
    *ahead = b.x > a.x ? RIGHT : b.x < a.x ? LEFT : b.y > a.y ? DOWN : UP;
    *back = *ahead == RIGHT ? LEFT : *ahead == LEFT ? RIGHT : *ahead == DOWN ? UP : DOWN;
    return 0;
}

/* Mark the directions along lay's path first .. first + n in c->dirs; with `cells`, list each
 * cell the first time it is marked there (*ncells).  -1 for a path off the canvas or diagonal. */
static int trace(canvas *c, const eagle_layout *lay, int32_t first, int32_t n, int32_t *cells,
                 int32_t *ncells)
{
    if (first < 0 || n < 0 || first > lay->n_points - n)
        return -1;
    const eagle_layout_point *p = lay->points + first;
    for (int32_t i = 0; i < n; ++i)
        if (!inside(c, p[i].x, p[i].y, 1))
            return -1;
    for (int32_t i = 0; i + 1 < n; ++i) {
        int ahead, back;
        if (step_of(p[i], p[i + 1], &ahead, &back))
            return -1;
        int32_t dx = (p[i + 1].x > p[i].x) - (p[i + 1].x < p[i].x);
        int32_t dy = (p[i + 1].y > p[i].y) - (p[i + 1].y < p[i].y);
        for (int32_t x = p[i].x, y = p[i].y; x != p[i + 1].x || y != p[i + 1].y;) {
            size_t at = (size_t)y * c->w + x;
            c->dirs[at] |= (uint8_t)ahead;
            x += dx;
            y += dy;
            size_t next = (size_t)y * c->w + x;
            if (cells && !c->dirs[next])
                cells[(*ncells)++] = (int32_t)next;
            c->dirs[next] |= (uint8_t)back;
        }
    }
    return 0;
}

/* The wires resolved into their cells: a tick on a border, a wire character in a blank cell. */
static void resolve_wires(canvas *c)
{
    for (size_t i = 0; i < (size_t)c->w * c->h; ++i) {
        uint8_t d = c->dirs[i];
        if (!d || c->written[i])
            continue;
        if (c->border[i]) {
            if (d & (UP | DOWN))
                c->cell[i] = TICK[d & (UP | DOWN)];
        } else if (c->cell[i] == ' ') {
            c->cell[i] = WIRE[d];
        }
    }
}

/* Long link k: out of its source's side, dotted through the blank cells, an arrow into its
 * destination. */
static int draw_long_link(canvas *c, const eagle_layout *lay, const eagle_layout_link *link,
                          int32_t k)
{
    const eagle_layout_box *src = NULL;
    for (int32_t b = 0; b < lay->n_boxes && !src; ++b)
        if (lay->boxes[b].node == link->src)
            src = &lay->boxes[b];
    if (!src)
        return eagle_fail(EAGLE_ERR_ARG,
                          "eagle_picture_text: link %d starts at node %d, which has "
                          "no box",
                          k, link->src);
    if (link->first < 0 || link->n < 1 || link->first > lay->n_points - link->n)
        return off_canvas("link", k);
    const eagle_layout_point *p = lay->points + link->first, end = p[link->n - 1];
    if (!inside(c, p[0].x, p[0].y, 1) || !inside(c, end.x, end.y, 1)) /* `last` indexes the cells */
        return off_canvas("link", k);
    int32_t ncells = 1;
    size_t last = (size_t)end.y * c->w + end.x;
    c->path[0] = (int32_t)((size_t)p[0].y * c->w + p[0].x);
    c->dirs[c->path[0]] = p[0].x >= src->x + src->w ? LEFT : RIGHT;
    int status = trace(c, lay, link->first, link->n, c->path, &ncells) ? off_canvas("link", k) : 0;
    c->dirs[last] = 0; /* the arrow's cell */
    for (int32_t i = 0; i < ncells && !status; ++i) {
        size_t at = (size_t)c->path[i];
        if (!c->dirs[at] || c->cell[at] != ' ')
            continue;
        if (!LONG[c->dirs[at]])
            status = eagle_fail(EAGLE_ERR_ARG, "eagle_picture_text: link %d meets itself", k);
        else
            c->cell[at] = LONG[c->dirs[at]];
    }
    for (int32_t i = 0; i < ncells; ++i) /* blank again for the next link */
        c->dirs[c->path[i]] = 0;
    if (status)
        return status;
    int32_t px = link->n > 1 ? p[link->n - 2].x : p[0].x;
    c->cell[last] = end.x > px || (end.x == px && link->n == 1) ? ARROW_RIGHT : ARROW_LEFT;
    return EAGLE_OK;
}

/* Python's str.isspace for what rstrip drops at a row's end. */
static int is_space(uint32_t ch)
{
    return (ch >= 0x09 && ch <= 0x0D) || (ch >= 0x1C && ch <= 0x20) || ch == 0x85 || ch == 0xA0
        || ch == 0x1680 || (ch >= 0x2000 && ch <= 0x200A) || ch == 0x2028 || ch == 0x2029
        || ch == 0x202F || ch == 0x205F || ch == 0x3000;
}

static char *encode(char *o, uint32_t ch)
{
    if (ch < 0x80) {
        *o++ = (char)ch;
    } else if (ch < 0x800) {
        *o++ = (char)(0xC0 | ch >> 6);
        *o++ = (char)(0x80 | (ch & 0x3F));
    } else if (ch < 0x10000) {
        *o++ = (char)(0xE0 | ch >> 12);
        *o++ = (char)(0x80 | (ch >> 6 & 0x3F));
        *o++ = (char)(0x80 | (ch & 0x3F));
    } else {
        *o++ = (char)(0xF0 | ch >> 18);
        *o++ = (char)(0x80 | (ch >> 12 & 0x3F));
        *o++ = (char)(0x80 | (ch >> 6 & 0x3F));
        *o++ = (char)(0x80 | (ch & 0x3F));
    }
    return o;
}

/* The header, then each row with its trailing blanks dropped, joined by newlines. */
static char *finish(const canvas *c, const char *header)
{
    size_t room = strlen(header) + (size_t)c->h * ((size_t)c->w * 4 + 1) + 1;
    char *out = malloc(room), *o = out;
    if (!out)
        return NULL;
    memcpy(o, header, strlen(header));
    o += strlen(header);
    for (int32_t y = 0; y < c->h; ++y) {
        const uint32_t *row = &c->cell[(size_t)y * c->w];
        int32_t n = c->w;
        while (n > 0 && is_space(row[n - 1]))
            --n;
        *o++ = '\n';
        for (int32_t x = 0; x < n; ++x)
            o = encode(o, row[x]);
    }
    *o = '\0';
    return out;
}

/* A text placed in the canvas (a plane row centred on x, a stage label from x). */
static int draw_label(canvas *c, const char *s, int32_t x, int32_t y, int centred, const char *what,
                      int32_t k)
{
    int status = EAGLE_OK;
    int32_t n = 0;
    uint32_t *text = text_of(s, &n, &status, what, k);
    if (!text)
        return status;
    x -= centred ? n / 2 : 0;
    if (inside(c, x, y, n))
        put(c, x, y, text, n, 1);
    else
        status = off_canvas(what, k);
    free(text);
    return status;
}

static int draw(canvas *c, const eagle_layout *lay, const eagle_picture_texts *t)
{
    int status = EAGLE_OK;
    for (int32_t k = 0; k < lay->n_boxes && !status; ++k) {
        const eagle_layout_box *b = &lay->boxes[k];
        if (b->node < 0 || b->node >= t->n_nodes)
            return eagle_fail(EAGLE_ERR_ARG,
                              "eagle_picture_text: box %d is of node %d, past the "
                              "%d node texts",
                              k, b->node, t->n_nodes);
        int32_t n = 0;
        uint32_t *text = text_of(t->nodes[b->node], &n, &status, "node text", b->node);
        if (text)
            status = draw_box(c, b, text, n, t->roles && t->roles[b->node] == EAGLE_ROLE_OPAQUE, k);
        free(text);
    }
    for (int32_t k = 0; k < lay->n_frames && !status; ++k) {
        int32_t n = 0;
        uint32_t *title = text_of(t->frames[k], &n, &status, "frame title", k);
        if (title)
            status = draw_frame(c, &lay->frames[k], title, n, k);
        free(title);
    }
    for (int32_t k = 0; k < lay->n_exits && !status; ++k)
        status = draw_label(c, t->exits[k], lay->exits[k].x, lay->exits[k].y, 1, "exit", k);
    for (int32_t k = 0; k < lay->n_stages && !status; ++k) {
        const eagle_layout_stage *s = &lay->stages[k];
        if (s->stage < 0 || s->stage >= t->n_stages)
            return eagle_fail(EAGLE_ERR_ARG,
                              "eagle_picture_text: stage row %d is of stage %d, "
                              "past the %d stage labels",
                              k, s->stage, t->n_stages);
        status = draw_label(c, t->stages[s->stage], s->x, s->y, 0, "stage label", s->stage);
    }
    for (int32_t k = 0; k < lay->n_wires && !status; ++k)
        if (trace(c, lay, lay->wires[k].first, lay->wires[k].n, NULL, NULL))
            status = off_canvas("wire", k);
    if (!status) {
        resolve_wires(c);
        memset(c->dirs, 0, (size_t)c->w * c->h); /* from now on: the long link being drawn */
    }
    for (int32_t k = 0; k < lay->n_links && !status; ++k)
        if (!lay->links[k].adjacent && lay->links[k].n > 0)
            status = draw_long_link(c, lay, &lay->links[k], k);
    return status;
}

/* What a layout of `lay`'s counts needs of `t`, and the arrays' pointers for those counts. */
static int check_input(const eagle_layout *lay, const eagle_picture_texts *t)
{
    if (!lay || !t || !t->header)
        return eagle_fail(EAGLE_ERR_ARG,
                          "eagle_picture_text: a NULL layout, texts or header: pass the "
                          "layout eagle_layout_run made and texts with a header");
    if (lay->width < 0 || lay->height < 0 || lay->n_boxes < 0 || lay->n_frames < 0
        || lay->n_exits < 0 || lay->n_stages < 0 || lay->n_wires < 0 || lay->n_links < 0
        || lay->n_points < 0 || (lay->n_boxes && !lay->boxes) || (lay->n_frames && !lay->frames)
        || (lay->n_exits && !lay->exits) || (lay->n_stages && !lay->stages)
        || (lay->n_wires && !lay->wires) || (lay->n_links && !lay->links)
        || (lay->n_points && !lay->points))
        return eagle_fail(EAGLE_ERR_ARG,
                          "eagle_picture_text: a layout with a negative count, or "
                          "a NULL array for a count above 0: pass the layout "
                          "eagle_layout_run made, unchanged");
    if (t->n_frames != lay->n_frames || t->n_exits != lay->n_exits)
        return eagle_fail(EAGLE_ERR_ARG,
                          "eagle_picture_text: %d frame titles and %d exit texts "
                          "for a layout of %d frames and %d exits",
                          t->n_frames, t->n_exits, lay->n_frames, lay->n_exits);
    if (t->n_nodes < 0 || t->n_stages < 0 || (t->n_nodes && !t->nodes)
        || (t->n_frames && !t->frames) || (t->n_exits && !t->exits) || (t->n_stages && !t->stages))
        return eagle_fail(EAGLE_ERR_ARG,
                          "eagle_picture_text: a negative count of texts, or NULL "
                          "texts for a count above 0: give each count the length "
                          "of its array");
    if ((int64_t)lay->width * lay->height > INT32_MAX)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_picture_text: a layout of more than 2^31 cells");
    return EAGLE_OK;
}

EAGLE_API int eagle_picture_text(const eagle_layout *lay, const eagle_picture_texts *texts,
                                 char **out)
{
    if (!out)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_picture_text: out is NULL");
    *out = NULL;
    int status = check_input(lay, texts);
    if (status)
        return status;
    size_t cells = (size_t)lay->width * lay->height;
    canvas c = {lay->width,
                lay->height,
                malloc(cells * sizeof(uint32_t) + 1),
                calloc(cells + 1, 1),
                calloc(cells + 1, 1),
                calloc(cells + 1, 1),
                malloc((cells + 1) * sizeof(int32_t))};
    if (!c.cell || !c.border || !c.written || !c.dirs || !c.path) {
        status = EAGLE_ERR_NOMEM;
    } else {
        for (size_t i = 0; i < cells; ++i)
            c.cell[i] = ' ';
        status = draw(&c, lay, texts);
        if (!status && !(*out = finish(&c, texts->header)))
            status = EAGLE_ERR_NOMEM;
    }
    free(c.cell);
    free(c.border);
    free(c.written);
    free(c.dirs);
    free(c.path);
    return status == EAGLE_ERR_NOMEM
        ? eagle_fail(EAGLE_ERR_NOMEM, "eagle_picture_text: out of memory")
        : status;
}
