"""Write the tiny CPU example model: a 2-layer Llama config and a byte-level BPE tokenizer.

No weights: the example recipe serves it with `--load-format dummy`, so vLLM fills random
weights and only `config.json` and the tokenizer files are needed. Run once; the output is
committed under examples/tiny-cpu/model/.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

TEXT = [
    "The catalogue measures how fast a model serves requests at each concurrency level.",
    "Prefill reads the prompt; generation writes one token at a time.",
    "A recipe is a launch command, a benchmark sweep and the reasons behind every flag.",
    "Numbers without a date and a source are rumours, not measurements.",
] * 8
CHAT_TEMPLATE = (Path(__file__).resolve().parents[1] / "tests" / "data" / "chat-template.jinja").read_text()
"""The plain role: content template the tests serve with; in the tokenizer, chat requests (llama-benchy, the
tool-calling check) work without a --chat-template flag."""


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512, special_tokens=["<s>", "</s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(TEXT, trainer)
    tokenizer.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "model_max_length": 512,
                "clean_up_tokenization_spaces": False,
                "chat_template": CHAT_TEMPLATE,
            },
            indent=2,
        )
        + "\n"
    )
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "vocab_size": tokenizer.get_vocab_size(),
        "max_position_embeddings": 512,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "bos_token_id": 0,
        "eos_token_id": 1,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"wrote {out} (vocab {tokenizer.get_vocab_size()})")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("examples/tiny-cpu/model"))
