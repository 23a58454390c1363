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
 * A key after which nothing changed (a space) prints "-".
 *
 * Build: cc -O2 -o xlatency xlatency.c -lX11 -lXext -l:libXtst.so.6
 * (no XTEST header is needed: the one function is declared here).
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
#include <sys/shm.h>
#include <time.h>

int XTestFakeKeyEvent(Display *, unsigned int, Bool, unsigned long);

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
    /* The pointer out of the way: no hover highlight in the rows. */
    XWarpPointer(d, None, root, 0, 0, 0, 0, 0, 0);
    XSync(d, False);
    for (int q = 5; q < argc; q++) {
        const char *query = argv[q];
        key(d, XK_Escape);
        /* Let the cleared table settle. */
        XShmGetImage(d, root, img, x, y, AllPlanes);
        uint64_t last = hash((unsigned char *)img->data, bytes);
        double still = now_ms();
        while (now_ms() - still < quiet) {
            XShmGetImage(d, root, img, x, y, AllPlanes);
            uint64_t hh = hash((unsigned char *)img->data, bytes);
            if (hh != last) { last = hh; still = now_ms(); }
        }
        for (size_t i = 0; i < strlen(query); i++) {
            double t0 = now_ms();
            key(d, sym_of(query[i]));
            double changed = -1, since = t0;
            int changes = 0;
            for (;;) {
                XShmGetImage(d, root, img, x, y, AllPlanes);
                double t = now_ms();
                uint64_t hh = hash((unsigned char *)img->data, bytes);
                if (hh != last) {
                    last = hh;
                    changed = t;
                    since = t;
                    changes++;
                } else if (t - since > quiet) {
                    break;
                }
                if (t - t0 > 10000) break;
            }
            printf("%.*s\t", (int)(i + 1), query);
            if (changed < 0) printf("-\t0\n");
            else printf("%.1f\t%d\n", changed - t0, changes);
            fflush(stdout);
        }
    }
    XShmDetach(d, &shm);
    shmdt(shm.shmaddr);
    XCloseDisplay(d);
    return 0;
}
