"""Azure OpenAI deployments (`provider: azure`): the `openai` SDK's `AzureOpenAI` client, configured
from AgentV's keys; requests, replies and errors are those of `OpenAIClient`."""

from __future__ import annotations

from typing import Any

from agentv_py.models.model_targets import AzureTarget
from agentv_py.runner.llm import OpenAIClient


def azure_endpoint(endpoint: str) -> str:
    """The endpoint the SDK takes (it appends `/openai/deployments/<deployment>` itself): a URL
    without a trailing `/openai`, or https://<resource>.openai.azure.com for a resource name."""
    value = endpoint.strip().rstrip("/")
    if not value.startswith(("http://", "https://")):
        return f"https://{value}.openai.azure.com"
    return value.removesuffix("/openai").rstrip("/")


class AzureClient(OpenAIClient):
    """One Azure OpenAI deployment: `POST {endpoint}/openai/deployments/{deployment}/chat/completions
    ?api-version={version}` with the `api-key` header."""

    sdk_retries_by_headers = True
    config: AzureTarget

    def __init__(self, config: AzureTarget, secrets: list[str] | None = None) -> None:
        super().__init__(config, secrets)

    @property
    def where(self) -> str:
        return azure_endpoint(self.config.endpoint)

    @property
    def model(self) -> str:
        return self.config.deployment

    @property
    def max_tokens(self) -> int | None:
        return self.config.max_output_tokens

    def _make_sdk(self) -> Any:
        import openai  # lazy, as for OpenAIClient

        return openai.AzureOpenAI(
            azure_endpoint=self.where,
            azure_deployment=self.config.deployment,
            api_version=self.config.version,
            **self._sdk_options(openai),
        )
