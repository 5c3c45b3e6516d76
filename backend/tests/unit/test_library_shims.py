"""The library internals Quire relies on are still there: an upgrade that changes them fails here,
loudly, instead of quietly turning a defence off.

- web/server.py subclasses uvicorn's httptools protocol: its hooks and its `cycle`/`pipeline`.
- web/csrf.py signs and checks Litestar CSRF tokens with names outside `litestar.middleware.csrf`'s
  `__all__`, and sets the scope state its `csrf_token()` template helper reads.
- queue/broker.py keys Dramatiq's Redis messages by their message id through the public
  `before_enqueue` hook, which works only while the broker reads the `redis_message_id` option
  after that hook; and it asks whether a message is held by reading the broker's hashes
  `<namespace>:<queue>.msgs` and `<namespace>:<queue>.DQ.msgs`. Its pipelined enqueue and its
  `reclaim` call the broker's dispatch script with the arguments Dramatiq's `_dispatch` passes;
  `reclaim` asks for a queue's size with maintenance on, which gives dead workers' messages back.

- queue/broker.py's `WakingConsumer` subclasses Dramatiq's private `_RedisConsumer` and rewrites its
  `__next__` with the consumer's own attributes, blocking on a wake-up list when idle.
- web/limits.py's `CountingRateLimitMiddleware` (given through `RateLimitConfig.middleware_class`)
  builds Litestar's answers and headers from a counter: it reads the middleware's `unit`,
  `max_requests` and `config`, and hands its helpers a `CacheObject` whose history has one entry per
  request counted.

Everything else uses public extension points: sessions through `SessionMiddleware(backend=...)`
and the backend's public methods, the rate limiter's fail-open through a `Store`.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path

import uvicorn
from dramatiq.brokers import redis as dramatiq_redis
from dramatiq.brokers.redis import RedisBroker as DramatiqRedisBroker
from dramatiq.common import dq_name
from dramatiq.message import Message
from litestar.middleware import csrf as litestar_csrf
from litestar.middleware import rate_limit as litestar_rate_limit
from litestar.utils.scope.state import ScopeState
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from quire.queue.broker import QUEUE, REDIS_MESSAGE_ID, KeyedByMessageId, RedisBroker, WakingConsumer
from quire.web.limits import CountingRateLimitMiddleware, login_rate_limit
from quire.web.server import HeaderDeadlineProtocol


def test_uvicorn_is_the_minor_version_the_header_deadline_was_written_for() -> None:
    assert uvicorn.__version__.startswith("0.54."), uvicorn.__version__


def test_uvicorns_httptools_protocol_has_the_hooks_the_header_deadline_overrides() -> None:
    for hook in ("connection_made", "on_headers_complete", "on_response_complete", "connection_lost"):
        assert hook in vars(HttpToolsProtocol), hook
        assert hook in vars(HeaderDeadlineProtocol), hook
    init = inspect.getsource(HttpToolsProtocol.__init__)
    assert "self.cycle" in init
    assert "self.pipeline" in init
    assert "self.loop" in init
    assert "response_complete" in inspect.getsource(RequestResponseCycle.__init__)
    # uvicorn still moves `cycle` to a pipelined request when its headers are complete.
    assert "self.pipeline.appendleft" in inspect.getsource(HttpToolsProtocol.on_headers_complete)


def test_litestar_csrf_internals_web_csrf_uses() -> None:
    secret = "s" * 32
    token = litestar_csrf.generate_csrf_token(secret=secret)
    body = token[: litestar_csrf.CSRF_SECRET_LENGTH]
    assert token == body + litestar_csrf.generate_csrf_hash(token=body, secret=secret)
    assert "csrf_token" in ScopeState.__slots__
    checker = litestar_csrf.CSRFMiddleware
    assert "_decode_csrf_token" in vars(checker)
    assert "self.config.secret" in inspect.getsource(checker._decode_csrf_token)


def test_dramatiqs_redis_broker_keys_a_message_by_the_option_set_before_enqueue() -> None:
    enqueue = inspect.getsource(DramatiqRedisBroker.enqueue)
    # The broker makes up its own Redis id, then lets middleware see the message, then stores it
    # under whatever the option says by then.
    hook = enqueue.index('self.emit_before("enqueue"')
    store = enqueue.index(f'self.do_enqueue(queue_name, message.options["{REDIS_MESSAGE_ID}"]')
    assert enqueue.index(f'"{REDIS_MESSAGE_ID}"') < hook < store
    # And the hook can set it: the option dict is the message's own.
    message: Message[None] = Message(queue_name=QUEUE, actor_name="a", args=(), kwargs={}, options={})
    KeyedByMessageId().before_enqueue(RedisBroker.__new__(RedisBroker), message, None)
    assert message.options[REDIS_MESSAGE_ID] == message.message_id
    # Acknowledging a consumed message uses the same option.
    assert f'message.options["{REDIS_MESSAGE_ID}"]' in inspect.getsource(dramatiq_redis._RedisConsumer.ack)


def test_dramatiqs_redis_broker_internals_the_pipelined_enqueue_uses() -> None:
    # `RedisBroker.enqueue_many` calls the broker's dispatch script as `do_enqueue` does: the same
    # arguments in the same order, then the Redis message id and the encoded message.
    dispatch = inspect.getsource(DramatiqRedisBroker._dispatch)
    assert 'dispatch = self.scripts["dispatch"]' in dispatch
    expected = [
        "args = [",
        "command,",
        "timestamp,",
        "queue_name,",
        "self.broker_id,",
        "self.heartbeat_timeout,",
        "self.dead_message_ttl,",
        "self._should_do_maintenance(command),",
        "self._max_unpack_size(),",
        "*args,",
    ]
    places = [dispatch.index(text, dispatch.index("args = [")) for text in expected]
    assert places == sorted(places)
    enqueue = inspect.getsource(DramatiqRedisBroker.enqueue)
    assert f'self.do_enqueue(queue_name, message.options["{REDIS_MESSAGE_ID}"], message.encode())' in enqueue
    assert "keys = [self.namespace]" in dispatch
    # `reclaim`: the script's maintenance gives back what dead workers took from the command's queue.
    script = (Path(dramatiq_redis.__file__).parent / "redis" / "dispatch.lua").read_text()
    assert 'if do_maintenance == "1" then' in script
    assert 'local dead_worker_queue_acks = dead_worker_acks .. "." .. queue_name' in script
    assert 'elseif command == "qsize" then' in script


def test_dramatiqs_redis_layout_the_presence_check_reads() -> None:
    dispatch = (Path(dramatiq_redis.__file__).parent / "redis" / "dispatch.lua").read_text()
    assert 'local queue_full_name = namespace .. ":" .. queue_name' in dispatch
    assert 'local queue_messages = queue_full_name .. ".msgs"' in dispatch
    # A delayed message waits in the `.DQ` queue, moved to the ready one by the consumer.
    assert dq_name(QUEUE) == f"{QUEUE}.DQ"
    assert 'redis.call("hset", queue_messages, message_id, message_data)' in dispatch


# The loop of Dramatiq's Redis consumer that `WakingConsumer.__next__` is a copy of, but for what it
# does when idle. A change to it means the copy must be read against the new loop.
DRAMATIQ_CONSUMER_LOOP = [
    "data = self.message_cache.pop(0)",
    "self.misses = 0",
    "message = Message.decode(data)",
    "self.queued_message_ids.add(message.message_id)",
    "return MessageProxy(message)",
    "self.outstanding_message_count < self.prefetch",
    "self.message_cache = messages = self.broker.do_fetch(",
    "self.prefetch - self.outstanding_message_count,",
    "self.misses, backoff_ms = compute_backoff(self.misses, max_backoff=self.timeout)",
]


def test_dramatiqs_redis_consumer_is_still_the_one_the_waking_consumer_copies() -> None:
    # The broker builds its consumers from `consumer_class`, which the waking one replaces.
    assert "self.consumer_class(self, queue_name, prefetch, timeout)" in inspect.getsource(DramatiqRedisBroker.consume)
    assert RedisBroker.__new__(RedisBroker).consumer_class is WakingConsumer
    assert issubclass(WakingConsumer, dramatiq_redis._RedisConsumer)
    # The attributes the copy reads are the ones the consumer sets up.
    init = inspect.getsource(dramatiq_redis._RedisConsumer.__init__)
    for attribute in ("self.message_cache = []", "self.queued_message_ids = set()", "self.misses = 0"):
        assert attribute in init, attribute
    for attribute in ("self.prefetch = prefetch", "self.timeout = timeout"):
        assert attribute in init, attribute
    assert isinstance(vars(dramatiq_redis._RedisConsumer)["outstanding_message_count"], property)
    # And the loop is the one the copy was made from, in the same order.
    loop = inspect.getsource(dramatiq_redis._RedisConsumer.__next__)
    places = [loop.index(line) for line in DRAMATIQ_CONSUMER_LOOP]
    assert places == sorted(places)
    # The acks and nacks, which the copy leaves to the parent, still forget a message the same way.
    for method in (dramatiq_redis._RedisConsumer.ack, dramatiq_redis._RedisConsumer.nack):
        assert "self.queued_message_ids.discard(message.message_id)" in inspect.getsource(method)
    assert "except redis.ConnectionError" in loop
    assert "raise ConnectionClosed" in loop


def test_litestars_rate_limiter_answers_from_a_history_of_one_entry_per_request() -> None:
    config = login_rate_limit()
    assert config.middleware_class is CountingRateLimitMiddleware
    assert issubclass(CountingRateLimitMiddleware, litestar_rate_limit.RateLimitMiddleware)

    async def app(scope: object, receive: object, send: object) -> None:
        return None

    limiter = CountingRateLimitMiddleware(app, config)
    # The attributes the counting middleware reads are the ones Litestar's sets from the config.
    assert (limiter.unit, limiter.max_requests, limiter.config) == (*config.rate_limit, config)
    limiter.max_requests = 10  # what each request sets from the app's setting
    window = litestar_rate_limit.DURATION_VALUES[limiter.unit]
    # The headers count what is left from the history's length, as the counter gives it.
    seen = litestar_rate_limit.CacheObject(history=[0] * 2, reset=int(time.time()) + window)
    headers = limiter.create_response_headers(seen)
    assert headers[config.rate_limit_remaining_header_key] == str(limiter.max_requests - 2)
    assert headers[config.rate_limit_limit_header_key] == str(limiter.max_requests)
    assert 0 < int(headers[config.rate_limit_reset_header_key]) <= window
    for helper in ("should_check_request", "cache_key_from_request", "create_send_wrapper"):
        assert callable(getattr(limiter, helper)), helper
