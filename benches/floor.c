// The floor of an exact, watched walk: only the system calls an index that
// must be exact after a restart cannot skip, and nothing else (no index, no
// comparison, no allocation per entry beyond the path of a folder).
//
//   per folder: openat (relative to its parent), inotify_add_watch,
//               getdents64 until empty, close
//   per entry:  fstatat(AT_SYMLINK_NOFOLLOW) relative to the folder
//
// fd -HI does the per-folder calls but no fstatat and no watch; updatedb
// stats folders only. THREADS threads share one stack of open folders, as
// fsindexd's walk does. Built and run by benches/floor.sh.
//
//   floor ROOT            (env: THREADS=2, NOSTAT=1, NOWATCH=1)
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
    unsigned long d_ino;
    long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

struct job {
    int fd;
    char *path;
};

static struct job *stack;
static size_t len, cap;
static int busy, ino_fd = -1, do_stat = 1;
static long entries, folders;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;

static void push(int fd, char *path) {
    pthread_mutex_lock(&lock);
    if (len == cap) {
        cap = cap ? cap * 2 : 1024;
        stack = realloc(stack, cap * sizeof *stack);
    }
    stack[len++] = (struct job){fd, path};
    pthread_cond_signal(&more);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *unused) {
    (void)unused;
    char buf[32768];
    long n_ent = 0, n_dir = 0;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (len == 0 && busy > 0)
            pthread_cond_wait(&more, &lock);
        if (len == 0) {
            pthread_cond_broadcast(&more);
            pthread_mutex_unlock(&lock);
            break;
        }
        struct job j = stack[--len];
        busy++;
        pthread_mutex_unlock(&lock);

        n_dir++;
        if (ino_fd >= 0)
            inotify_add_watch(ino_fd, j.path,
                              IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY |
                                  IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF |
                                  IN_ONLYDIR | IN_DONT_FOLLOW);
        size_t plen = strlen(j.path);
        for (;;) {
            long n = syscall(SYS_getdents64, j.fd, buf, sizeof buf);
            if (n <= 0)
                break;
            for (long off = 0; off < n;) {
                struct linux_dirent64 *d = (void *)(buf + off);
                off += d->d_reclen;
                const char *s = d->d_name;
                if (s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2])))
                    continue;
                n_ent++;
                struct stat st;
                int is_dir = d->d_type == DT_DIR;
                if (do_stat && fstatat(j.fd, s, &st, AT_SYMLINK_NOFOLLOW) == 0)
                    is_dir = S_ISDIR(st.st_mode);
                if (is_dir) {
                    int c = openat(j.fd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                    if (c >= 0) {
                        size_t nlen = strlen(s);
                        char *p = malloc(plen + nlen + 2);
                        memcpy(p, j.path, plen);
                        p[plen] = '/';
                        memcpy(p + plen + 1, s, nlen + 1);
                        push(c, p);
                    }
                }
            }
        }
        close(j.fd);
        free(j.path);
        pthread_mutex_lock(&lock);
        busy--;
        if (len == 0 && busy == 0)
            pthread_cond_broadcast(&more);
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_lock(&lock);
    entries += n_ent;
    folders += n_dir;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: floor ROOT\n");
        return 2;
    }
    int threads = getenv("THREADS") ? atoi(getenv("THREADS")) : 2;
    if (threads < 1)
        threads = 1;
    if (!getenv("NOWATCH"))
        ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (getenv("NOSTAT"))
        do_stat = 0;
    int fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    push(fd, strdup(argv[1]));
    pthread_t t[64];
    if (threads > 64)
        threads = 64;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("%ld entries, %ld folders\n", entries, folders);
    return 0;
}
