"""HF-exact tokenizers and chat templates, from the overhead C++ libraries.

    from overhead import Tokenizer
    tok = Tokenizer.from_pretrained("microsoft/phi-4")   # short name, HF id, or folder
    text = tok.apply_chat_template(messages, tokenize=False)
    ids = tok(text)["input_ids"]

`Tokenizer` stands in for transformers' `AutoTokenizer`: `tok(text)`, `encode`, `decode`,
`apply_chat_template` take the same arguments and give the same results (ids equal to HF
tokenizers', renders equal to Jinja2's), plus `encode_batch(texts, threads=0)` and `count`.
"""
from __future__ import annotations

import os
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

from ._overhead import ChatTemplate, LoadError, TemplateError
from ._overhead import Tokenizer as _NativeTokenizer

__all__ = ["AutoTokenizer", "ChatTemplate", "LoadError", "TemplateError", "Tokenizer"]
__version__ = "0.1.0"

_NO_TEMPLATE = (
    "Cannot use chat template functions because tokenizer.chat_template is not set and no template "
    "argument was passed! For information about writing templates and setting the "
    "tokenizer.chat_template attribute, please see the documentation at "
    "https://huggingface.co/docs/transformers/main/en/chat_templating"
)
_UNSET = object()
_SPECIAL_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

Message = Mapping[str, Any]
Conversation = Sequence[Message]


class Tokenizer(_NativeTokenizer):
    """A loaded tokenizer: immutable, safe to share between threads (encoding releases the GIL)."""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Union[str, os.PathLike], *,
                        date: Optional[str] = None) -> "Tokenizer":
        """Loads a tokenizer: a short name (phi-4, llama-3.3-70b-instruct, gemma-2-27b-it, cl100k,
        o200k, ...), an HF model id found in the local HF cache (the seed's three ids fall back
        to the bundled sets), a folder holding tokenizer.json, or a tokenizer.json file.

        `date` ("YYYY-MM-DD") pins the chat template's strftime_now, as the CLI's --date does;
        by default it reads the clock, as transformers does. Raises LoadError (an OSError)."""
        return cls(os.fspath(pretrained_model_name_or_path), date=date)

    def __repr__(self) -> str:
        return f"overhead.Tokenizer({self.name_or_path!r}, vocab_size={self.vocab_size})"

    # Special tokens as transformers exposes them (strings from tokenizer_config.json, or None).
    @property
    def bos_token(self) -> Optional[str]:
        return self.special_token("bos_token")

    @property
    def eos_token(self) -> Optional[str]:
        return self.special_token("eos_token")

    @property
    def unk_token(self) -> Optional[str]:
        return self.special_token("unk_token")

    @property
    def pad_token(self) -> Optional[str]:
        return self.special_token("pad_token")

    @property
    def special_tokens_map(self) -> dict:
        out = {k: self.special_token(k) for k in _SPECIAL_TOKEN_KEYS}
        return {k: v for k, v in out.items() if v is not None}

    @property
    def chat_template(self) -> Union[str, dict, None]:
        """tokenizer_config.json's chat_template: a string, a dict of named templates, or None."""
        # Read once: the config can be large (thousands of added tokens) and this is on every
        # apply_chat_template call's path.
        cached = self.__dict__.get("_chat_template", _UNSET)
        if cached is _UNSET:
            raw = self.config.get("chat_template")
            if isinstance(raw, list):
                raw = {t["name"]: t["template"] for t in raw if isinstance(t, dict) and "name" in t}
            cached = self.__dict__["_chat_template"] = raw
        return cached

    def get_chat_template(self, chat_template: Optional[str] = None, tools: Optional[list] = None) -> str:
        """The template source apply_chat_template uses, chosen by transformers' rules: a named
        template when the config holds several ("tool_use" when tools are given, else "default"),
        a template string given as is, else the tokenizer's own."""
        own = self.chat_template
        if isinstance(own, dict):
            if chat_template is not None and chat_template in own:
                return own[chat_template]
            if chat_template is not None:
                return chat_template
            if tools is not None and "tool_use" in own:
                return own["tool_use"]
            if "default" in own:
                return own["default"]
            raise ValueError(
                "This model has multiple chat templates with no default specified! Please either pass a chat "
                "template or the name of the template you wish to use to the `chat_template` argument. Available "
                f"template names are {sorted(own.keys())}.")
        if chat_template is not None:
            return chat_template
        if own is None:
            raise ValueError(_NO_TEMPLATE)
        return own

    def apply_chat_template(
        self,
        conversation: Union[Conversation, Sequence[Conversation]],
        tools: Optional[List[dict]] = None,
        documents: Optional[List[Mapping[str, str]]] = None,
        chat_template: Optional[str] = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool = False,
        tokenize: bool = True,
        padding: bool = False,
        truncation: bool = False,
        max_length: Optional[int] = None,
        return_tensors: Optional[str] = None,
        return_dict: bool = False,
        return_assistant_tokens_mask: bool = False,
        tokenizer_kwargs: Optional[dict] = None,
        **kwargs: Any,
    ) -> Any:
        """transformers' apply_chat_template: renders the conversation (or each of a batch of
        conversations) with the chat template; extra keyword arguments reach the template as
        variables. tokenize=True (the default, as in transformers) gives the ids of the render
        encoded without added special tokens; return_dict=True gives {"input_ids",
        "attention_mask"} instead. Padding, truncation, tensors and assistant masks are not
        supported (NotImplementedError)."""
        if padding or truncation or max_length is not None or return_tensors is not None:
            raise NotImplementedError("overhead: padding, truncation, max_length and return_tensors are not supported")
        if return_assistant_tokens_mask:
            raise NotImplementedError("overhead: return_assistant_tokens_mask is not supported")
        if tokenizer_kwargs:
            unknown = set(tokenizer_kwargs) - {"add_special_tokens"}
            if unknown:
                raise NotImplementedError(f"overhead: tokenizer_kwargs {sorted(unknown)} are not supported")
        if continue_final_message and add_generation_prompt:
            raise ValueError(
                "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when "
                "you want the model to continue the final message, and add_generation_prompt when you want to add a "
                "header that will prompt it to start a new assistant message instead.")
        if tools is not None:
            tools = [_tool_schema(t) for t in tools]
        template = self._template(self.get_chat_template(chat_template, tools))

        batched = isinstance(conversation, (list, tuple)) and len(conversation) > 0 and (
            isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages"))
        conversations = conversation if batched else [conversation]
        rendered = []
        for chat in conversations:
            if hasattr(chat, "messages"):
                chat = chat.messages
            text = template.render(chat, tools=tools, documents=documents,
                                   add_generation_prompt=add_generation_prompt, **kwargs)
            if continue_final_message:
                text = _cut_after_final_message(text, chat)
            rendered.append(text)

        if not tokenize:
            return rendered if batched else rendered[0]
        add_special = bool((tokenizer_kwargs or {}).get("add_special_tokens", False))
        if batched:
            encoded = self(rendered, add_special_tokens=add_special)
        else:
            encoded = self(rendered[0], add_special_tokens=add_special)
        return encoded if return_dict else encoded["input_ids"]


# transformers' name for the class that loads "whatever tokenizer this is".
AutoTokenizer = Tokenizer


def _tool_schema(tool: Any) -> dict:
    if isinstance(tool, dict):
        return tool
    if callable(tool):
        raise TypeError(
            f"overhead: tools must be JSON schemas (dicts); pass the schema of {getattr(tool, '__name__', tool)!r} "
            "(transformers.utils.get_json_schema makes one)")
    raise TypeError(f"overhead: a tool must be a dict (a JSON schema), not {type(tool).__name__}")


def _cut_after_final_message(rendered: str, chat: Iterable[Message]) -> str:
    """continue_final_message: the render ends where the final message's text ends, so the
    model continues it (what transformers does, including its two spacing cases)."""
    messages = list(chat)
    final = messages[-1]["content"] if messages else None
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if isinstance(block, dict) and "text" in block:
                final = block["text"]
                break
        else:
            raise ValueError("continue_final_message is set but we could not find any text to continue in the "
                             "final message!")
    if not isinstance(final, str) or final.strip() not in rendered:
        raise ValueError("continue_final_message is set but the final message does not appear in the chat after "
                         "applying the chat template! This can happen if the chat template deletes portions of "
                         "the final message. Please verify the chat template and final message in your chat to "
                         "ensure they are compatible.")
    at = rendered.rindex(final.strip())
    if rendered[at:at + len(final.lstrip())] == final:
        return rendered[:at + len(final.lstrip())]
    return rendered[:at + len(final.strip())]
