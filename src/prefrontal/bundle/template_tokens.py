"""The control tokens of the widely used chat templates, and how the fence breaks them.

A tokenizer reads a control token's text as the control token wherever it
appears in a prompt (Hugging Face tokenizers split special tokens out of
raw text by default), so stored text holding ``<start_of_turn>`` or
``[INST]`` could open a turn of its own. :func:`break_tokens` puts a
backslash after the first character of every one of them
(``<\\start_of_turn>``, ``[\\INST]``, ``<\\|im_start|\\>``), so the text is
plain characters for every tokenizer and still readable.

The families, from their published templates and tokenizers:

- **ChatML / Qwen / Yi / Phi-4** (``<|im_start|>``, ``<|im_end|>``,
  ``<|im_sep|>``, ``<|endoftext|>``), **Llama 3** (``<|begin_of_text|>``,
  ``<|start_header_id|>``, ``<|end_header_id|>``, ``<|eot_id|>``,
  ``<|eom_id|>``, ``<|python_tag|>``; meta-llama/llama3
  ``llama/tokenizer.py``), **Phi-3** (``<|system|>``, ``<|user|>``,
  ``<|assistant|>``, ``<|end|>``), **Cohere Command** (``<|START_OF_TURN_TOKEN|>``,
  ``<|SYSTEM_TOKEN|>``, ``<|USER_TOKEN|>``, ``<|CHATBOT_TOKEN|>``,
  ``<|END_OF_TURN_TOKEN|>``), **OpenAI harmony** (``<|start|>``,
  ``<|message|>``, ``<|channel|>``, ``<|constrain|>``, ``<|end|>``,
  ``<|return|>``, ``<|call|>``; openai/harmony ``docs/format.md``),
  **Granite** (``<|start_of_role|>``), **GLM** (``<|user|>``) and
  **Gemma 4** (``<|turn>``, ``<turn|>``; google-deepmind/gemma
  ``gemma/gm/text/_tokenizer.py``): every ``<|`` and ``|>``;
- **DeepSeek** V2/V3/R1: the same with a full-width bar, U+FF5C
  (``<｜begin▁of▁sentence｜>``, ``<｜User｜>``, ``<｜Assistant｜>``,
  ``<｜tool▁calls▁begin｜>``): every ``<｜`` and ``｜>``;
- **Gemma 2 and 3** (``<start_of_turn>``, ``<end_of_turn>``,
  ``<start_of_image>``, ``<bos>``, ``<eos>``; google-deepmind/gemma
  ``gemma/gm/text/_template.py``), **Cohere**'s ``<BOS_TOKEN>``, **Qwen**'s
  ``<tool_call>`` and ``<think>``, sentencepiece's ``<s>``, ``</s>``,
  ``<unk>``, ``<pad>``: every tag whose name is one of
  :data:`ANGLE_NAMES` or has an underscore (``<snake_case>``), opening or
  closing;
- **Llama 2** (``[INST]``, ``[/INST]``, ``<<SYS>>``, ``<</SYS>>``;
  meta-llama/llama ``llama/generation.py``) and **Mistral**
  (``[INST]``, ``[SYSTEM_PROMPT]``, ``[/SYSTEM_PROMPT]``, ``[TOOL_CALLS]``,
  ``[AVAILABLE_TOOLS]``, ``[TOOL_RESULTS]``, ``[TOOL_CONTENT]``, ``[ARGS]``,
  ``[CALL_ID]``, ``[THINK]``, ``[IMG]``; mistralai/mistral-common
  ``tokens/tokenizers/base.py``): every bracketed upper-case name of three
  characters or more (``[A-Z][A-Z0-9_]{2,}``, opening or closing), GLM's
  ``[gMASK]`` and ``[sMASK]``, Gemma's ``[@BOS@]`` and ``[multimodal]``,
  and ``<<SYS>>`` in any case.

Turn markers written as words (``Human:``, ``Assistant:``, ``### User``)
are labels, handled where a line starts (:mod:`prefrontal.bundle.fence`).
"""

from __future__ import annotations

import re

__all__ = ["ANGLE_NAMES", "CONTROL_TOKEN", "break_tokens", "might_hold_tokens"]

ANGLE_NAMES = (
    "s|bos|eos|unk|pad|mask|sep|cls|sop|eop|think|eot|eom|bot|image|audio|unused[0-9]+|2mass"
)
"""Control tokens written ``<name>`` (and ``</name>``) that have no underscore."""

CONTROL_TOKEN = re.compile(
    r"""<[|｜] | [|｜]>                                # ChatML and kin; DeepSeek's wide bar
      | <</?SYS>>                                    # Llama 2's system block
      | </?(?:"""
    + ANGLE_NAMES
    + r""")>             # sentencepiece and Gemma tags, <think>
      | </?[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+>   # <start_of_turn>, <BOS_TOKEN>, <tool_call>
      | (?-i:\[/?[A-Z][A-Z0-9_]{2,}\])               # [INST], [SYSTEM_PROMPT], [TOOL_CALLS]
      | \[(?:gMASK|sMASK|@BOS@|multimodal)\]         # GLM, Gemma
    """,
    re.VERBOSE | re.IGNORECASE,
)
"""A control token of a family above; in any case, but for the bracketed upper-case names."""


def might_hold_tokens(text: str) -> bool:
    """False when ``text`` holds none of the characters a control token starts with (cheap)."""
    return "<" in text or "[" in text or "|" in text or "｜" in text


def break_tokens(text: str) -> str:
    """``text`` with a backslash after the first character of every control token.

    Tokens may overlap (``<|>``): the closing bars are broken once more after
    the pass of the pattern, so none is left whole.
    """
    if not might_hold_tokens(text):
        return text
    broken = CONTROL_TOKEN.sub(_broken, text)
    return broken.replace("|>", "|\\>").replace("｜>", "｜\\>")


def _broken(match: re.Match[str]) -> str:
    token = match.group(0)
    return f"{token[0]}\\{token[1:]}"
