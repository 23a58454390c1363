/* Keystroke to rows settled on screen, measured from outside the window,
 * as a user sees it (benches/gui-latency.sh builds and runs it under Xvfb).
 *
 *   xlatency X Y W H QUERY...
 *
 * For each query: Escape (fsgui clears its query box), then each character
 * typed as a real key press and release through XTEST. After each key, the
 * screen region X,Y,W,H (the table and the match count, not the query box
 * with its blinking cursor) is grabbed through MIT-SHM as fast as it comes
 * (about every millisecond) and hashed; the key's latency is the time from
 * the key press to the region's LAST change, once it has stayed the same
 * for QUIET_MS (default 400) ms: when the rows had settled. Prints one line
 * per key: the query so far, the milliseconds, how many changes were seen.
 * A key after which nothing changed (a space) prints "-". A fourth
 * column is the time to the region's FIRST change (the first rows drawn).
 *
 *   xlatency X Y W H --scroll SECONDS wheel|pagedown
 *
 * Scrolls instead: the wheel turned down one notch every 1000/WHEEL_HZ ms
 * (default 60) with the pointer over the region, or PageDown pressed at
 * REPEAT_HZ (default 30, a held key's repeat rate), for SECONDS; the region
 * is grabbed as fast as it comes and each distinct grab is a frame. Prints
 * one line per second (frames seen), then "frames/s", "longest gap ms",
 * "grabs/s" (how fast the region was grabbed: a ceiling on what can be
 * seen) and "inputs".
 *
 * With WINDOW=ID (the window's X id, as `xdotool search` gives it), the
 * region is not polled: the X server's DAMAGE extension reports each
 * drawing into the window, and the region is grabbed and hashed only
 * then, so the measuring takes almost no CPU from the window it measures
 * (polling keeps a core busy: the X server copying the region into shared
 * memory every millisecond, and the hashing). A change is stamped when its
 * damage is read. Without WINDOW, the polling above.
 *
 * A fifth column is the key's CLOCK_MONOTONIC time in ms, to join with
 * fsgui's own steps (FSGUI_TRACE=1 stamps them with the same clock).
 *
 * Build: cc -O2 -o xlatency xlatency.c -lX11 -lXext -l:libXtst.so.6
 * -l:libXdamage.so.1 (no XTEST or DAMAGE header is needed: the functions
 * used are declared here).
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/keysym.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/shm.h>
#include <time.h>

int XTestFakeKeyEvent(Display *, unsigned int, Bool, unsigned long);
int XTestFakeButtonEvent(Display *, unsigned int, Bool, unsigned long);
/* libXdamage, as in <X11/extensions/Xdamage.h>. */
typedef XID Damage;
typedef struct {
    int type;
    unsigned long serial;
    Bool send_event;
    Display *display;
    Drawable drawable;
    Damage damage;
    int level;
    Bool more;
    Time timestamp;
    XRectangle area;
    XRectangle geometry;
} XDamageNotifyEvent;
Bool XDamageQueryExtension(Display *, int *, int *);
Damage XDamageCreate(Display *, Drawable, int);
#define XDamageReportRawRectangles 0

/* DAMAGE: the event base, the window's origin on the root, the region. */
static int damage_base = -1;
static int win_x, win_y, reg_x, reg_y, reg_w, reg_h;

/* Waits until a drawing touches the region or `until_ms` passes: 1 when
 * one did. */
static int wait_damage(Display *d, double until_ms);

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t hash(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    const uint64_t *w = (const uint64_t *)p;
    for (size_t i = 0; i < n / 8; i++) h = (h ^ w[i]) * 1099511628211ull;
    return h;
}

static void key(Display *d, KeySym sym) {
    KeyCode code = XKeysymToKeycode(d, sym);
    XTestFakeKeyEvent(d, code, True, CurrentTime);
    XTestFakeKeyEvent(d, code, False, CurrentTime);
    XFlush(d);
}

static KeySym sym_of(char c) {
    if (c == ' ') return XK_space;
    char s[2] = {c, 0};
    return XStringToKeysym(s);
}

static int wait_damage(Display *d, double until_ms) {
    for (;;) {
        int hit = 0;
        while (XPending(d)) {
            XEvent ev;
            XNextEvent(d, &ev);
            if (ev.type != damage_base) continue;
            XDamageNotifyEvent *de = (XDamageNotifyEvent *)&ev;
            int ax = win_x + de->area.x, ay = win_y + de->area.y;
            if (ax < reg_x + reg_w && ax + de->area.width > reg_x && ay < reg_y + reg_h &&
                ay + de->area.height > reg_y)
                hit = 1;
        }
        if (hit) return 1;
        double left = until_ms - now_ms();
        if (left <= 0) return 0;
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(ConnectionNumber(d), &fds);
        struct timeval tv = {(long)(left / 1000), (long)((left - (long)(left / 1000) * 1000) * 1000)};
        select(ConnectionNumber(d) + 1, &fds, NULL, NULL, &tv);
    }
}

/* See the usage above: frames seen while scrolling. */
static int scroll(Display *d, Window root, XImage *img, int x, int y, int w, int h, size_t bytes,
                  double secs, int wheel) {
    double hz = wheel ? (getenv("WHEEL_HZ") ? atof(getenv("WHEEL_HZ")) : 60)
                      : (getenv("REPEAT_HZ") ? atof(getenv("REPEAT_HZ")) : 30);
    KeyCode page = XKeysymToKeycode(d, XK_Page_Down);
    if (wheel) XWarpPointer(d, None, root, 0, 0, 0, 0, x + w / 2, y + h / 2);
    XSync(d, False);
    XShmGetImage(d, root, img, x, y, AllPlanes);
    uint64_t last = hash((unsigned char *)img->data, bytes);
    double t0 = now_ms(), next = t0, changed = t0, gap = 0, second = t0 + 1000;
    long frames = 0, in_second = 0, grabs = 0, inputs = 0;
    for (;;) {
        double t = now_ms();
        if (t - t0 >= secs * 1000) break;
        if (t >= next) {
            if (wheel) {
                XTestFakeButtonEvent(d, 5, True, CurrentTime);
                XTestFakeButtonEvent(d, 5, False, CurrentTime);
            } else {
                XTestFakeKeyEvent(d, page, True, CurrentTime);
                XTestFakeKeyEvent(d, page, False, CurrentTime);
            }
            XFlush(d);
            inputs++;
            next += 1000 / hz;
        }
        if (damage_base >= 0) {
            double until = next < t0 + secs * 1000 ? next : t0 + secs * 1000;
            if (!wait_damage(d, until)) continue;
        }
        t = now_ms();
        XShmGetImage(d, root, img, x, y, AllPlanes);
        grabs++;
        uint64_t hh = hash((unsigned char *)img->data, bytes);
        if (hh != last) {
            last = hh;
            if (t - changed > gap) gap = t - changed;
            changed = t;
            frames++;
            in_second++;
        }
        if (t >= second) {
            printf("second\t%ld\n", in_second);
            in_second = 0;
            second += 1000;
        }
    }
    printf("frames/s\t%.1f\nlongest gap ms\t%.1f\ngrabs/s\t%.0f\ninputs\t%ld\n", frames / secs, gap,
           grabs / secs, inputs);
    XWarpPointer(d, None, root, 0, 0, 0, 0, 0, 0);
    XSync(d, False);
    (void)h;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s X Y W H QUERY...\n", argv[0]);
        return 2;
    }
    int x = atoi(argv[1]), y = atoi(argv[2]), w = atoi(argv[3]), h = atoi(argv[4]);
    double quiet = getenv("QUIET_MS") ? atof(getenv("QUIET_MS")) : 400;
    Display *d = XOpenDisplay(NULL);
    if (!d || !XShmQueryExtension(d)) {
        fprintf(stderr, "no display, or no MIT-SHM\n");
        return 1;
    }
    Window root = DefaultRootWindow(d);
    XShmSegmentInfo shm;
    XImage *img = XShmCreateImage(d, DefaultVisual(d, DefaultScreen(d)),
                                  DefaultDepth(d, DefaultScreen(d)), ZPixmap, NULL, &shm, w, h);
    shm.shmid = shmget(IPC_PRIVATE, img->bytes_per_line * img->height, IPC_CREAT | 0600);
    shm.shmaddr = img->data = shmat(shm.shmid, 0, 0);
    shm.readOnly = False;
    XShmAttach(d, &shm);
    shmctl(shm.shmid, IPC_RMID, 0);
    size_t bytes = (size_t)img->bytes_per_line * img->height;
    reg_x = x, reg_y = y, reg_w = w, reg_h = h;
    if (getenv("WINDOW")) {
        Window win = (Window)strtoul(getenv("WINDOW"), NULL, 0);
        int err;
        Window child;
        if (!XDamageQueryExtension(d, &damage_base, &err)) {
            fprintf(stderr, "no DAMAGE extension\n");
            return 1;
        }
        XTranslateCoordinates(d, win, root, 0, 0, &win_x, &win_y, &child);
        XDamageCreate(d, win, XDamageReportRawRectangles);
        damage_base += 0; /* XDamageNotify is the first event */
    }
    /* The pointer out of the way: no hover highlight in the rows. */
    XWarpPointer(d, None, root, 0, 0, 0, 0, 0, 0);
    XSync(d, False);
    if (argc >= 8 && strcmp(argv[5], "--scroll") == 0)
        return scroll(d, root, img, x, y, w, h, bytes, atof(argv[6]), strcmp(argv[7], "wheel") == 0);
    for (int q = 5; q < argc; q++) {
        const char *query = argv[q];
        key(d, XK_Escape);
        /* Let the cleared table settle. */
        XShmGetImage(d, root, img, x, y, AllPlanes);
        uint64_t last = hash((unsigned char *)img->data, bytes);
        double still = now_ms();
        while (now_ms() - still < quiet) {
            if (damage_base >= 0 && !wait_damage(d, still + quiet)) break;
            XShmGetImage(d, root, img, x, y, AllPlanes);
            uint64_t hh = hash((unsigned char *)img->data, bytes);
            if (hh != last) { last = hh; still = now_ms(); }
        }
        for (size_t i = 0; i < strlen(query); i++) {
            double t0 = now_ms();
            key(d, sym_of(query[i]));
            double changed = -1, first = -1, since = t0;
            int changes = 0;
            for (;;) {
                double t;
                if (damage_base >= 0) {
                    double until = since + quiet < t0 + 10000 ? since + quiet : t0 + 10000;
                    if (!wait_damage(d, until)) break;
                    t = now_ms();
                    XShmGetImage(d, root, img, x, y, AllPlanes);
                } else {
                    XShmGetImage(d, root, img, x, y, AllPlanes);
                    t = now_ms();
                }
                uint64_t hh = hash((unsigned char *)img->data, bytes);
                if (hh != last) {
                    last = hh;
                    changed = t;
                    if (first < 0) first = t;
                    since = t;
                    changes++;
                } else if (t - since > quiet) {
                    break;
                }
                if (t - t0 > 10000) break;
            }
            printf("%.*s\t", (int)(i + 1), query);
            if (changed < 0) printf("-\t0\t-\t%.2f\n", t0);
            else printf("%.1f\t%d\t%.1f\t%.2f\n", changed - t0, changes, first - t0, t0);
            fflush(stdout);
        }
    }
    XShmDetach(d, &shm);
    shmdt(shm.shmaddr);
    XCloseDisplay(d);
    return 0;
}
