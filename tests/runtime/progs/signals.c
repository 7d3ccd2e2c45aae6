// SPDX-License-Identifier: GPL-2.0-only
/* Signals during traced calls: handlers that call traced functions, run
 * synchronously (raise) and asynchronously (another thread's
 * pthread_kill) while the main thread is inside traced calls. */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "counts.h"

volatile long sink;
static volatile int stop;
COUNTER(handler_work);
COUNTER(raiser);
COUNTER(busy);

TRACED void handler_work(int sig)
{
	HIT(handler_work);
	sink += sig;
}

static void on_signal(int sig)
{
	handler_work(sig);
}

TRACED void raiser(int i)
{
	HIT(raiser);
	raise(SIGUSR1);
	sink += i;
}

TRACED void busy(long i)
{
	HIT(busy);
	sink += i;
}

static void *kicker(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	struct timespec ts = { 0, 20000 };

	for (int i = 0; i < 500; i++) {
		pthread_kill(target, SIGUSR2);
		nanosleep(&ts, NULL);
	}
	stop = 1;
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t self = pthread_self(), t;
	long i = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	for (int k = 0; k < 100; k++)
		raiser(k);
	pthread_create(&t, NULL, kicker, &self);
	/* bounded, so the recorder (16 MiB) never overflows however long
	 * a busy machine makes the kicker take */
	while (!stop && i < 400000)
		busy(i++);
	pthread_join(t, NULL);
	PRINT(handler_work);
	PRINT(raiser);
	PRINT(busy);
	return 0;
}
