/* The floor under fsgui's frames in software GL: what Mesa (llvmpipe under
 * Xvfb, as benches/gui-latency.sh runs fsgui) takes for one frame of a
 * window that size with nothing drawn but a clear, and for each
 * window-sized quad drawn as egui draws its fills (textured, blended).
 *
 *   glfloor W H FRAMES QUADS...
 *
 * For each count of quads: FRAMES frames of clear, that many quads,
 * swap, glFinish; prints the quads, wall ms per frame and the process's
 * CPU ms per frame (llvmpipe's threads included).
 *
 * Build: cc -O2 -o glfloor glfloor.c -lX11 -lGL
 */
#include <GL/gl.h>
#include <GL/glx.h>
#include <X11/Xlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double ms(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s W H FRAMES QUADS...\n", argv[0]);
        return 2;
    }
    int w = atoi(argv[1]), h = atoi(argv[2]), frames = atoi(argv[3]);
    Display *d = XOpenDisplay(NULL);
    if (!d) {
        fprintf(stderr, "no display\n");
        return 1;
    }
    int attrs[] = {GLX_RGBA, GLX_DOUBLEBUFFER, GLX_RED_SIZE, 8, GLX_GREEN_SIZE, 8, GLX_BLUE_SIZE, 8, None};
    XVisualInfo *vi = glXChooseVisual(d, DefaultScreen(d), attrs);
    if (!vi) {
        fprintf(stderr, "no visual\n");
        return 1;
    }
    Window root = RootWindow(d, vi->screen);
    XSetWindowAttributes swa = {0};
    swa.colormap = XCreateColormap(d, root, vi->visual, AllocNone);
    Window win = XCreateWindow(d, root, 0, 0, w, h, 0, vi->depth, InputOutput, vi->visual, CWColormap, &swa);
    XMapWindow(d, win);
    XSync(d, False);
    GLXContext ctx = glXCreateContext(d, vi, NULL, True);
    glXMakeCurrent(d, win, ctx);
    printf("renderer\t%s\n", (const char *)glGetString(GL_RENDERER));
    unsigned char white[4] = {255, 255, 255, 255};
    GLuint tex;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, 1, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, white);
    glTexEnvi(GL_TEXTURE_ENV, GL_TEXTURE_ENV_MODE, GL_MODULATE);
    /* GLFLOOR_PLAIN=1: untextured, unblended quads, for comparison. */
    int plain = getenv("GLFLOOR_PLAIN") && atoi(getenv("GLFLOOR_PLAIN"));
    if (!plain) {
        glEnable(GL_TEXTURE_2D);
        glEnable(GL_BLEND);
    }
    glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glViewport(0, 0, w, h);
    printf("quads\twall ms/frame\tcpu ms/frame\n");
    for (int a = 4; a < argc; a++) {
        int quads = atoi(argv[a]);
        double ws = 0, cs = 0;
        /* Five frames first: llvmpipe compiles its shaders on first use. */
        for (int f = 0; f < 5 + frames; f++) {
            if (f == 5) ws = ms(CLOCK_MONOTONIC), cs = ms(CLOCK_PROCESS_CPUTIME_ID);
            glClearColor(0.1f, 0.1f, 0.1f, 1);
            glClear(GL_COLOR_BUFFER_BIT);
            for (int q = 0; q < quads; q++) {
                glColor4f(0.2f, 0.2f, 0.2f + 0.01f * q, 0.9f);
                glBegin(GL_QUADS);
                glTexCoord2f(0, 0); glVertex2f(-1, -1);
                glTexCoord2f(1, 0); glVertex2f(1, -1);
                glTexCoord2f(1, 1); glVertex2f(1, 1);
                glTexCoord2f(0, 1); glVertex2f(-1, 1);
                glEnd();
            }
            glXSwapBuffers(d, win);
            glFinish();
            if (f == 4 + frames)
                printf("%d\t%.2f\t%.2f\n", quads, (ms(CLOCK_MONOTONIC) - ws) / frames,
                       (ms(CLOCK_PROCESS_CPUTIME_ID) - cs) / frames);
        }
    }
    glXMakeCurrent(d, None, NULL);
    glXDestroyContext(d, ctx);
    XCloseDisplay(d);
    return 0;
}
