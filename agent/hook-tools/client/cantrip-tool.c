/*
 * cantrip-tool: the hook tool client (juju-semantics section 5.1).
 *
 * One small program, symlinked into the tools directory under every tool name
 * (config-get, relation-get, ...). A hook runs e.g. `relation-get -r db:3 host`; this
 * program takes the tool name from basename(argv[0]) (or, run as cantrip-tool itself,
 * from argv[1]), reads JUJU_CONTEXT_ID and JUJU_AGENT_SOCKET_ADDRESS (and
 * JUJU_AGENT_SOCKET_NETWORK, which must be "unix" when set), sends one request to the
 * unit agent, copies the returned stdout and stderr out and exits with the returned
 * code. It is C, not a Node script, because a hook may call dozens of tools and each
 * call should cost about as much as starting /bin/true.
 *
 * Built by agent/hook-tools/client/build-client.ts, which passes the bounds from
 * runtime/limits.ts as -D flags, so the agent and the client cannot disagree on them.
 *
 * Protocol (the same text is in agent/hook-tools/transport/frames.ts):
 *
 * Transport: a unix stream socket. One connection carries one tool call: the client
 * sends a CALL, the server answers RESULT and closes. If the command wants stdin the
 * server answers NEEDS_STDIN instead; the client then reads all of its stdin and sends
 * the CALL again on the same connection, with stdin included, and the server answers
 * RESULT. A connection carries at most these two CALLs.
 *
 * Frame: a 12-byte header, then `length` bytes of body. Integers are little-endian.
 *
 *   offset 0  4 bytes  magic "CTRP" (0x43 0x54 0x52 0x50)
 *   offset 4  u8       version, 1
 *   offset 5  u8       kind: 1 CALL (client to server), 2 RESULT, 3 NEEDS_STDIN
 *   offset 6  u16      reserved, 0
 *   offset 8  u32      body length in bytes
 *
 * A "string" below is a u32 byte length then that many UTF-8 bytes, never containing NUL.
 *
 *   CALL         string context id, string cwd, string tool name,
 *                u32 argument count, that many strings (the arguments after argv[0]),
 *                u8 stdin flag: 0 = no stdin, 1 = u32 length then the stdin bytes
 *   RESULT       u8 exit code, u32 length + stdout bytes, u32 length + stderr bytes
 *   NEEDS_STDIN  empty body
 *
 * A body must end exactly where its last field does. Bounds: the CALL body without
 * its stdin part is at most CANTRIP_ARGS_BYTES_MAX with at most CANTRIP_ARGS_COUNT_MAX
 * arguments, stdin at most CANTRIP_STDIN_BYTES_MAX, and stdout plus stderr at most
 * CANTRIP_OUTPUT_BYTES_MAX. The client checks a reply's header before reading its body
 * and every length inside the body against the bytes actually there.
 *
 * Failures of the client itself print one `ERROR ...` line to stderr and exit 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#if !defined(CANTRIP_STDIN_BYTES_MAX) || !defined(CANTRIP_ARGS_BYTES_MAX) || \
    !defined(CANTRIP_ARGS_COUNT_MAX) || !defined(CANTRIP_OUTPUT_BYTES_MAX)
#error "build with agent/hook-tools/client/build-client.ts: it passes the bounds from runtime/limits.ts"
#endif

#define FRAME_HEADER_BYTES 12u
#define FRAME_VERSION 1u
#define KIND_CALL 1u
#define KIND_RESULT 2u
#define KIND_NEEDS_STDIN 3u
#define RESULT_BODY_BYTES_MAX ((size_t)CANTRIP_OUTPUT_BYTES_MAX + 9u)
#define MULTIPLEXER_NAME "cantrip-tool"

static const unsigned char frame_magic[4] = { 'C', 'T', 'R', 'P' };

/* The agent's socket path, for error messages. */
static const char *agent_path = "";

static int write_all(int fd, const unsigned char *data, size_t length);

/* Prints `ERROR <message>` as one write and exits 1. */
static void fail(const char *format, ...)
{
  char line[2048];
  va_list args;
  int used;
  memcpy(line, "ERROR ", 6);
  va_start(args, format);
  used = vsnprintf(line + 6, sizeof line - 7, format, args);
  va_end(args);
  if (used < 0) used = 0;
  if ((size_t)used > sizeof line - 8) used = (int)(sizeof line - 8);
  line[6 + used] = '\n';
  (void)write_all(2, (const unsigned char *)line, (size_t)used + 7u);
  exit(1);
}

/* Waits until fd is ready, for descriptors someone left in non-blocking mode. */
static void wait_ready(int fd, short events)
{
  struct pollfd p;
  p.fd = fd;
  p.events = events;
  p.revents = 0;
  while (poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
}

/* Writes everything; returns 0, or -1 with errno set. */
static int write_all(int fd, const unsigned char *data, size_t length)
{
  while (length > 0) {
    ssize_t n = write(fd, data, length);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) { wait_ready(fd, POLLOUT); continue; }
      return -1;
    }
    data += n;
    length -= (size_t)n;
  }
  return 0;
}

/* Sends everything on the socket; MSG_NOSIGNAL turns a dead agent into EPIPE, not SIGPIPE. */
static void send_all(int fd, const unsigned char *data, size_t length)
{
  while (length > 0) {
    ssize_t n = send(fd, data, length, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) { wait_ready(fd, POLLOUT); continue; }
      if (errno == EPIPE || errno == ECONNRESET) fail("connection to the unit agent at %s closed before a reply", agent_path);
      fail("cannot send to the unit agent at %s: %s", agent_path, strerror(errno));
    }
    data += n;
    length -= (size_t)n;
  }
}

/* Reads exactly length bytes from the agent; an early EOF means the agent went away. */
static void receive_all(int fd, unsigned char *data, size_t length)
{
  while (length > 0) {
    ssize_t n = read(fd, data, length);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) { wait_ready(fd, POLLIN); continue; }
      if (errno == ECONNRESET) n = 0;
      else fail("cannot read from the unit agent at %s: %s", agent_path, strerror(errno));
    }
    if (n == 0) fail("connection to the unit agent at %s closed before a reply", agent_path);
    data += n;
    length -= (size_t)n;
  }
}

/* A growing byte buffer. Every size it reaches is bounded by the limits above. */
struct buffer {
  unsigned char *data;
  size_t length;
  size_t capacity;
};

static void reserve(struct buffer *b, size_t extra)
{
  size_t wanted;
  if (extra > SIZE_MAX - b->length) fail("out of memory");
  wanted = b->length + extra;
  if (wanted <= b->capacity) return;
  if (b->capacity == 0) b->capacity = 4096;
  while (b->capacity < wanted) {
    if (b->capacity > SIZE_MAX / 2) { b->capacity = wanted; break; }
    b->capacity *= 2;
  }
  b->data = realloc(b->data, b->capacity);
  if (b->data == NULL) fail("out of memory");
}

static void put_bytes(struct buffer *b, const void *data, size_t length)
{
  reserve(b, length);
  if (length > 0) memcpy(b->data + b->length, data, length);
  b->length += length;
}

static void put_u8(struct buffer *b, unsigned value)
{
  unsigned char byte = (unsigned char)value;
  put_bytes(b, &byte, 1);
}

static void store_u32(unsigned char *at, uint32_t value)
{
  at[0] = (unsigned char)(value & 0xffu);
  at[1] = (unsigned char)((value >> 8) & 0xffu);
  at[2] = (unsigned char)((value >> 16) & 0xffu);
  at[3] = (unsigned char)((value >> 24) & 0xffu);
}

static uint32_t load_u32(const unsigned char *at)
{
  return (uint32_t)at[0] | ((uint32_t)at[1] << 8) | ((uint32_t)at[2] << 16) | ((uint32_t)at[3] << 24);
}

static void put_u32(struct buffer *b, uint32_t value)
{
  unsigned char bytes[4];
  store_u32(bytes, value);
  put_bytes(b, bytes, 4);
}

/* Strings come from argv, the environment and getcwd, so they hold no NUL by construction. */
static void put_string(struct buffer *b, const char *text)
{
  size_t length = strlen(text);
  if (length > (size_t)CANTRIP_ARGS_BYTES_MAX) fail("arguments too large: the limit is %lu bytes", (unsigned long)CANTRIP_ARGS_BYTES_MAX);
  put_u32(b, (uint32_t)length);
  put_bytes(b, text, length);
}

static char *current_dir(void)
{
  size_t size = 4096;
  for (;;) {
    char *dir = malloc(size);
    if (dir == NULL) fail("out of memory");
    if (getcwd(dir, size) != NULL) return dir;
    free(dir);
    if (errno != ERANGE || size >= (size_t)CANTRIP_ARGS_BYTES_MAX) fail("cannot get the working directory: %s", strerror(errno));
    size *= 2;
  }
}

/* Reads all of stdin, up to the limit; a closed stdin reads as empty. */
static void read_stdin(struct buffer *into)
{
  size_t start = into->length;
  for (;;) {
    ssize_t n;
    size_t room;
    reserve(into, 65536);
    room = into->capacity - into->length;
    n = read(0, into->data + into->length, room);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) { wait_ready(0, POLLIN); continue; }
      if (errno == EBADF) return;
      fail("cannot read stdin: %s", strerror(errno));
    }
    if (n == 0) return;
    into->length += (size_t)n;
    if (into->length - start > (size_t)CANTRIP_STDIN_BYTES_MAX) {
      fail("stdin too large: the limit is %lu bytes", (unsigned long)CANTRIP_STDIN_BYTES_MAX);
    }
  }
}

static int connect_agent(const char *path)
{
  struct sockaddr_un address;
  int fd;
  if (strlen(path) >= sizeof address.sun_path) fail("cannot connect to the unit agent at %s: socket path too long", path);
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  memcpy(address.sun_path, path, strlen(path) + 1);
  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) fail("cannot connect to the unit agent at %s: %s", path, strerror(errno));
  if (connect(fd, (const struct sockaddr *)&address, sizeof address) < 0) {
    int error = errno;
    if (error == EINTR || error == EINPROGRESS) {
      /* The connect carries on in the background; wait for it and collect its outcome. */
      socklen_t length = sizeof error;
      wait_ready(fd, POLLOUT);
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) < 0) error = errno;
    }
    if (error != 0) fail("cannot connect to the unit agent at %s: %s", path, strerror(error));
  }
  return fd;
}

/*
 * A process started with stdin, stdout or stderr closed would otherwise get its agent
 * socket as that descriptor, and read its own reply as stdin or write output into it.
 */
static void open_standard_fds(void)
{
  int fd;
  for (fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null < 0) exit(1);
      if (null != fd) exit(1);
    }
  }
}

static const char *base_name(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash == NULL ? path : slash + 1;
}

int main(int argc, char **argv)
{
  const char *tool;
  const char *context_id;
  const char *network;
  char **args;
  int arg_count;
  int i;
  int fd;
  int sent_stdin = 0;
  char *cwd;
  struct buffer request = { NULL, 0, 0 };
  size_t stdin_flag_at;

  open_standard_fds();
  if (argc < 1 || argv[0] == NULL) fail("no program name in argv[0]");
  tool = base_name(argv[0]);
  args = argv + 1;
  arg_count = argc - 1;
  if (strncmp(tool, MULTIPLEXER_NAME, strlen(MULTIPLEXER_NAME)) == 0) {
    /* Run under its own name (not a tool symlink): the tool is the first argument. */
    if (arg_count < 1) {
      static const char usage[] = "usage: " MULTIPLEXER_NAME " <tool> [args...]  (normally run through a symlink named after the tool)\n";
      (void)write_all(2, (const unsigned char *)usage, sizeof usage - 1);
      return 2;
    }
    tool = args[0];
    args++;
    arg_count--;
  }

  context_id = getenv("JUJU_CONTEXT_ID");
  if (context_id == NULL || context_id[0] == '\0') fail("JUJU_CONTEXT_ID not set");
  agent_path = getenv("JUJU_AGENT_SOCKET_ADDRESS");
  if (agent_path == NULL || agent_path[0] == '\0') fail("JUJU_AGENT_SOCKET_ADDRESS not set");
  network = getenv("JUJU_AGENT_SOCKET_NETWORK");
  if (network != NULL && network[0] != '\0' && strcmp(network, "unix") != 0) {
    fail("JUJU_AGENT_SOCKET_NETWORK \"%s\" is not supported; expected \"unix\"", network);
  }
  if ((unsigned long)arg_count > (unsigned long)CANTRIP_ARGS_COUNT_MAX) {
    fail("too many arguments: %d, the limit is %lu", arg_count, (unsigned long)CANTRIP_ARGS_COUNT_MAX);
  }
  cwd = current_dir();

  /* The header's length is patched in once the body is complete. */
  put_bytes(&request, frame_magic, 4);
  put_u8(&request, FRAME_VERSION);
  put_u8(&request, KIND_CALL);
  put_u8(&request, 0);
  put_u8(&request, 0);
  put_u32(&request, 0);
  put_string(&request, context_id);
  put_string(&request, cwd);
  put_string(&request, tool);
  put_u32(&request, (uint32_t)arg_count);
  for (i = 0; i < arg_count; i++) put_string(&request, args[i]);
  if (request.length - FRAME_HEADER_BYTES > (size_t)CANTRIP_ARGS_BYTES_MAX) {
    fail("arguments too large: the limit is %lu bytes", (unsigned long)CANTRIP_ARGS_BYTES_MAX);
  }
  stdin_flag_at = request.length;
  put_u8(&request, 0);
  store_u32(request.data + 8, (uint32_t)(request.length - FRAME_HEADER_BYTES));

  fd = connect_agent(agent_path);
  send_all(fd, request.data, request.length);

  for (;;) {
    unsigned char header[FRAME_HEADER_BYTES];
    unsigned char *body;
    uint32_t length;
    uint32_t stdout_length;
    uint32_t stderr_length;
    size_t at;
    int code;

    receive_all(fd, header, sizeof header);
    length = load_u32(header + 8);
    if (memcmp(header, frame_magic, 4) != 0 || header[4] != FRAME_VERSION || header[6] != 0 || header[7] != 0) {
      fail("the unit agent at %s sent a malformed reply", agent_path);
    }
    if (header[5] == KIND_NEEDS_STDIN) {
      if (length != 0) fail("the unit agent at %s sent a malformed reply", agent_path);
      if (sent_stdin) fail("the unit agent at %s asked for stdin twice", agent_path);
      sent_stdin = 1;
      /* Replace the stdin flag with flag 1, a length and the bytes, then resend. */
      request.length = stdin_flag_at;
      put_u8(&request, 1);
      put_u32(&request, 0);
      {
        size_t stdin_at = request.length;
        read_stdin(&request);
        store_u32(request.data + stdin_at - 4, (uint32_t)(request.length - stdin_at));
      }
      store_u32(request.data + 8, (uint32_t)(request.length - FRAME_HEADER_BYTES));
      send_all(fd, request.data, request.length);
      continue;
    }
    if (header[5] != KIND_RESULT) fail("the unit agent at %s sent a malformed reply", agent_path);
    if ((size_t)length > RESULT_BODY_BYTES_MAX || length < 9u) {
      fail("the unit agent at %s sent a reply of %lu bytes, outside 9 to %lu", agent_path, (unsigned long)length, (unsigned long)RESULT_BODY_BYTES_MAX);
    }
    body = malloc(length);
    if (body == NULL) fail("out of memory");
    receive_all(fd, body, length);
    code = body[0];
    stdout_length = load_u32(body + 1);
    at = 5;
    if (stdout_length > length - at - 4u) fail("the unit agent at %s sent a malformed reply", agent_path);
    stderr_length = load_u32(body + at + stdout_length);
    if (stderr_length != length - at - 4u - stdout_length) fail("the unit agent at %s sent a malformed reply", agent_path);
    close(fd);
    if (write_all(1, body + at, stdout_length) < 0) {
      int error = errno;
      if (error == EPIPE) return 1;
      fail("cannot write stdout: %s", strerror(error));
    }
    if (write_all(2, body + at + stdout_length + 4u, stderr_length) < 0) return 1;
    return code;
  }
}
