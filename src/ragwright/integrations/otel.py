"""ragwright's spans as OpenTelemetry spans (``pip install 'ragwright[otel]'``).

    from ragwright.integrations.otel import instrument
    instrument()            # the global TracerProvider (set up by you or opentelemetry-instrument)
    instrument(provider)    # or a provider of your own

Every `ragwright.tracing.span` of this process then becomes a span of the tracer "ragwright",
a child of whatever span is current (a web framework's request span, say), so one `ask` is
one trace: ``ragwright.ask`` > ``ragwright.search`` > the arms, fusion, reranking, the graph
walk, ``ragwright.llm`` (with ``gen_ai.usage.input_tokens``/``output_tokens``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from ragwright.errors import MissingDependencyError
from ragwright.tracing import Attribute, Span, install

try:
    from opentelemetry import trace
except ImportError as exc:  # pragma: no cover - the extra is in dev
    raise MissingDependencyError("OpenTelemetry tracing", "pip install 'ragwright[otel]'") from exc


class _OtelSpan:
    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def set(self, name: str, value: Attribute) -> None:
        self._span.set_attribute(name, value)


class OpenTelemetryTracer:
    """A `ragwright.tracing.Tracer` over an OpenTelemetry tracer provider (default: the
    global one, looked up at each span so one set up later still counts)."""

    def __init__(self, provider: trace.TracerProvider | None = None) -> None:
        self._provider = provider

    @contextmanager
    def span(self, name: str, attributes: Mapping[str, Attribute]) -> Iterator[Span]:
        tracer = trace.get_tracer("ragwright", tracer_provider=self._provider)
        # Exceptions are recorded on the span and set its status to error.
        with tracer.start_as_current_span(name, attributes=dict(attributes)) as span:
            yield _OtelSpan(span)


def provider_configured() -> bool:
    """Whether the process has a tracer provider (the API's default only records nothing)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def instrument(provider: trace.TracerProvider | None = None) -> OpenTelemetryTracer:
    """Install an `OpenTelemetryTracer` for this process and return it."""
    tracer = OpenTelemetryTracer(provider)
    install(tracer)
    return tracer
