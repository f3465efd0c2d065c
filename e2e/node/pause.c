/*
 * The project's pod sandbox ("pause") program: PID 1 of every pod sandbox. It holds the pod's
 * namespaces, sleeps until SIGTERM or SIGINT, and reaps children that are re-parented to it.
 * Built static (no libc in the image).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig) { (void)sig; stop = 1; }

static void on_child(int sig) {
  (void)sig;
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    printf("inferencebench-pause 1\n");
    return 0;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_handler = on_child;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &sa, NULL);
  if (getpid() != 1) {
    fprintf(stderr, "inferencebench-pause: not PID 1 (pid %d), reaping only our own children\n", (int)getpid());
  }
  while (!stop) {
    pause();
  }
  return 0;
}
