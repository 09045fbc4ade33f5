/*
 * An experiment, not part of ptykit or of `npm run bench`: can a reader thread outside libuv bring
 * a Node process's PTY read path up to the kernel loop (bench/kernel-pty-read.py)?
 * See README.md next to this file for how to build and run it, and docs/performance.md
 * ("5 Dec: a native reader thread, measured") for what it measured.
 *
 * start(fd, onWake, blocking, pull) starts a thread that reads the PTY master `fd` into a buffer
 * and wakes JavaScript through a thread-safe function when bytes wait and no wake is pending.
 *   blocking = 1: the thread clears O_NONBLOCK and blocks in read(2), one syscall per chunk, like
 *                 the Python loop (a real provider could not do this: a blocked read cannot be
 *                 interrupted by close(2)); 0: read until EAGAIN, then poll(2).
 *   pull = 1:     after a wake, JavaScript keeps pulling on a timer (see run.cjs) and the thread
 *                 wakes it again only after a pull found nothing: one hand-off per ~100 KB in a
 *                 flood instead of one per 4 KB chunk.
 * onWake(buffer | null, ended, errno) gets the bytes that waited; pull(handle) returns
 * { buf, ended } or null (nothing waited: the next chunk wakes JavaScript again).
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HIGH_WATER (4u << 20) /* the thread waits while this much is unread by JavaScript */

typedef struct {
  int fd, blocking, pull;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *buf;
  size_t len, cap;
  int wake_pending, ended, err;
  int owners; /* the thread-safe function and the JavaScript handle; freed when both let go */
  napi_threadsafe_function tsfn;
} reader_t;

static void let_go(reader_t *r) {
  pthread_mutex_lock(&r->mu);
  int last = --r->owners == 0;
  pthread_mutex_unlock(&r->mu);
  if (last) {
    free(r->buf);
    free(r);
  }
}

/* Takes what waits, under the lock. */
static void take(reader_t *r, char **buf, size_t *len, int *ended, int *err) {
  *buf = r->buf;
  *len = r->len;
  *ended = r->ended;
  *err = r->err;
  r->buf = NULL;
  r->len = r->cap = 0;
  pthread_cond_signal(&r->cv);
}

static napi_value to_buffer(napi_env env, char *buf, size_t len) {
  napi_value out;
  void *data;
  if (len == 0) napi_get_null(env, &out);
  else napi_create_buffer_copy(env, len, buf, &data, &out);
  free(buf);
  return out;
}

static void call_js(napi_env env, napi_value cb, void *ctx, void *data) {
  reader_t *r = ctx;
  (void)data;
  if (env == NULL) return;
  char *buf;
  size_t len;
  int ended, err;
  pthread_mutex_lock(&r->mu);
  take(r, &buf, &len, &ended, &err);
  if (!r->pull) r->wake_pending = 0;
  pthread_mutex_unlock(&r->mu);
  napi_value argv[3], undef;
  argv[0] = to_buffer(env, buf, len);
  napi_get_boolean(env, ended, &argv[1]);
  napi_create_int32(env, err, &argv[2]);
  napi_get_undefined(env, &undef);
  napi_call_function(env, undef, cb, 3, argv, NULL);
}

static void tsfn_finalize(napi_env env, void *data, void *hint) {
  reader_t *r = data;
  (void)env;
  (void)hint;
  pthread_join(r->thread, NULL);
  let_go(r);
}

static void handle_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  let_go(data);
}

static void wake(reader_t *r, int need) {
  if (need) napi_call_threadsafe_function(r->tsfn, NULL, napi_tsfn_blocking);
}

static void *run(void *arg) {
  reader_t *r = arg;
  static __thread char chunk[65536];
  if (r->blocking) fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) & ~O_NONBLOCK);
  for (;;) {
    ssize_t n = read(r->fd, chunk, sizeof chunk);
    if (n > 0) {
      pthread_mutex_lock(&r->mu);
      while (r->len + (size_t)n > HIGH_WATER) pthread_cond_wait(&r->cv, &r->mu);
      if (r->len + (size_t)n > r->cap) {
        r->cap = (r->len + (size_t)n) * 2;
        if (r->cap < 65536) r->cap = 65536;
        r->buf = realloc(r->buf, r->cap);
      }
      memcpy(r->buf + r->len, chunk, (size_t)n);
      r->len += (size_t)n;
      int need = !r->wake_pending;
      r->wake_pending = 1;
      pthread_mutex_unlock(&r->mu);
      wake(r, need);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      struct pollfd p = {r->fd, POLLIN, 0};
      poll(&p, 1, -1);
      continue;
    }
    /* EIO (every slave fd closed, the master drained) or end of file. */
    pthread_mutex_lock(&r->mu);
    r->ended = 1;
    r->err = n < 0 ? errno : 0;
    int need = !r->wake_pending;
    r->wake_pending = 1;
    pthread_mutex_unlock(&r->mu);
    wake(r, need);
    napi_release_threadsafe_function(r->tsfn, napi_tsfn_release);
    return NULL;
  }
}

static napi_value pull(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out, ended_value;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  reader_t *r;
  napi_get_value_external(env, argv[0], (void **)&r);
  char *buf;
  size_t len;
  int ended, err;
  pthread_mutex_lock(&r->mu);
  take(r, &buf, &len, &ended, &err);
  if (len == 0 && !ended) r->wake_pending = 0;
  pthread_mutex_unlock(&r->mu);
  if (len == 0 && !ended) {
    free(buf);
    napi_get_null(env, &out);
    return out;
  }
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "buf", to_buffer(env, buf, len));
  napi_get_boolean(env, ended, &ended_value);
  napi_set_named_property(env, out, "ended", ended_value);
  return out;
}

static napi_value start(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4], name, handle;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  reader_t *r = calloc(1, sizeof *r);
  napi_get_value_int32(env, argv[0], &r->fd);
  napi_get_value_int32(env, argv[2], &r->blocking);
  napi_get_value_int32(env, argv[3], &r->pull);
  r->owners = 2;
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  napi_create_string_utf8(env, "ptyReader", NAPI_AUTO_LENGTH, &name);
  napi_create_threadsafe_function(env, argv[1], NULL, name, 0, 1, r, tsfn_finalize, r, call_js, &r->tsfn);
  pthread_create(&r->thread, NULL, run, r);
  napi_create_external(env, r, handle_finalize, NULL, &handle);
  return handle;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "start", NAPI_AUTO_LENGTH, start, NULL, &fn);
  napi_set_named_property(env, exports, "start", fn);
  napi_create_function(env, "pull", NAPI_AUTO_LENGTH, pull, NULL, &fn);
  napi_set_named_property(env, exports, "pull", fn);
  return exports;
}
