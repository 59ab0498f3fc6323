"""The papers privpub reproduces (the five seed papers, then PGB): one definition of their
keys, their order and how they are cited.

Every part of privpub that names a paper (the report's sections, the registry's ``paper=``,
``privpub list`` and ``show``, the leaderboard's citations) reads it from :data:`PAPERS`, in
the order the report shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Paper", "PAPERS", "SEED_PAPERS", "REFERENCES", "paper_citation"]


@dataclass(frozen=True)
class Paper:
    """A paper privpub reproduces.

    Attributes
    ----------
    key : str
        The key used everywhere (experiment files ``conf/experiment/<key>_*.yaml``, the
        registry's ``paper=``, result rows).
    citation : str
        How the report names it in one line.
    bibtex : str
        A BibTeX entry.
    """

    key: str
    citation: str
    bibtex: str


_PAPERS = (
    Paper(
        "qardaji2012",
        "Qardaji & Li, Recursive partitioning and summarization, ASIACCS 2012",
        "@inproceedings{qardaji2012,\n"
        "  author    = {Wahbeh Qardaji and Ninghui Li},\n"
        "  title     = {Recursive Partitioning and Summarization: A Practical Framework for\n"
        "               Differentially Private Data Publishing},\n"
        "  booktitle = {Proceedings of the 7th ACM Symposium on Information, Computer and\n"
        "               Communications Security (ASIACCS)},\n"
        "  year      = {2012}\n"
        "}",
    ),
    Paper(
        "epasto2022",
        "Epasto et al., Smooth anonymity for sparse graphs, 2022",
        "@misc{epasto2022,\n"
        "  author        = {Alessandro Epasto and Hossein Esfandiari and Vahab Mirrokni and\n"
        "                   Andr{\\'e}s Mu{\\~n}oz Medina},\n"
        "  title         = {Smooth Anonymity for Sparse Graphs},\n"
        "  year          = {2022},\n"
        "  eprint        = {2207.06358},\n"
        "  archivePrefix = {arXiv}\n"
        "}",
    ),
    Paper(
        "day2016",
        "Day, Li & Lyu, Graph degree distribution under node DP, SIGMOD 2016",
        "@inproceedings{day2016,\n"
        "  author    = {Wei-Yen Day and Ninghui Li and Min Lyu},\n"
        "  title     = {Publishing Graph Degree Distribution with Node Differential Privacy},\n"
        "  booktitle = {Proceedings of the 2016 International Conference on Management of\n"
        "               Data (SIGMOD)},\n"
        "  year      = {2016}\n"
        "}",
    ),
    Paper(
        "sala2011",
        "Sala et al., Pygmalion: DP dK-2 graph models, IMC 2011",
        "@inproceedings{sala2011,\n"
        "  author    = {Alessandra Sala and Xiaohan Zhao and Christo Wilson and Haitao Zheng\n"
        "               and Ben Y. Zhao},\n"
        "  title     = {Sharing Graphs using Differentially Private Graph Models},\n"
        "  booktitle = {Proceedings of the 2011 ACM SIGCOMM Internet Measurement Conference\n"
        "               (IMC)},\n"
        "  year      = {2011}\n"
        "}",
    ),
    Paper(
        "farias2021",
        "Farias et al., Local dampening, PVLDB 2021",
        "@article{farias2021,\n"
        "  author  = {Victor A. E. Farias and Felipe T. Brito and Cheryl Flynn and\n"
        "             Javam C. Machado and Subhabrata Majumdar and Divesh Srivastava},\n"
        "  title   = {Local Dampening: Differential Privacy for Non-numeric Queries via\n"
        "             Local Sensitivity},\n"
        "  journal = {Proceedings of the VLDB Endowment},\n"
        "  volume  = {14},\n"
        "  number  = {4},\n"
        "  year    = {2021}\n"
        "}",
    ),
    Paper(
        "pgb2024",
        "Liu, Du, Cao, Yan, Liu & Yoshikawa, PGB: benchmarking differentially private "
        "synthetic graph generation algorithms, 2024",
        "@misc{pgb2024,\n"
        "  author        = {Shang Liu and Hao Du and Yang Cao and Bo Yan and Jinfei Liu and\n"
        "                   Masatoshi Yoshikawa},\n"
        "  title         = {{PGB}: Benchmarking Differentially Private Synthetic Graph\n"
        "                   Generation Algorithms},\n"
        "  year          = {2024},\n"
        "  eprint        = {2408.02928},\n"
        "  archivePrefix = {arXiv},\n"
        "  note          = {code: https://github.com/dooohow/PGB}\n"
        "}",
    ),
)

#: The papers privpub reproduces (the five seed papers, then PGB), by key, in report order.
PAPERS: dict[str, Paper] = {p.key: p for p in _PAPERS}

#: The five seed papers (privpub's first five reproductions), in report order: ``privpub
#: reproduce`` with these five keys is the paper suite of docs/timings.md ("all five").
SEED_PAPERS: tuple[str, ...] = tuple(PAPERS)[:5]


#: Outside references the leaderboards cite (``reference:`` in ``conf/task/*.yaml``): works
#: privpub does not reproduce but whose methods or findings it uses. Each entry has only the
#: fields checked against the work itself (its page, its venue's programme, its repository).
REFERENCES: dict[str, Paper] = {
    p.key: p
    for p in (
        Paper(
            "hay2009",
            "Hay, Li, Miklau & Jensen, Accurate estimation of the degree distribution of "
            "private networks, ICDM 2009",
            "@inproceedings{hay2009,\n"
            "  author    = {Michael Hay and Chao Li and Gerome Miklau and David Jensen},\n"
            "  title     = {Accurate Estimation of the Degree Distribution of Private Networks},\n"
            "  booktitle = {IEEE International Conference on Data Mining (ICDM)},\n"
            "  year      = {2009}\n"
            "}",
        ),
        Paper(
            "ning2021",
            "Ning, Udayashankar, Qunaibi, Knopf & He, Benchmarking differentially private "
            "graph algorithms (DPGraph), TPDP 2021",
            "@inproceedings{ning2021,\n"
            "  author    = {Huiyi Ning and Sreeharsha Udayashankar and Sara Qunaibi and\n"
            "               Karl Knopf and Xi He},\n"
            "  title     = {Benchmarking Differentially Private Graph Algorithms},\n"
            "  booktitle = {Theory and Practice of Differential Privacy (TPDP),\n"
            "               ICML 2021 Workshop},\n"
            "  year      = {2021},\n"
            "  note      = {DPGraph, https://dpgraph.org}\n"
            "}",
        ),
        Paper(
            "diffprivlib",
            "Holohan, Braghin, Mac Aonghusa & Levacher, Diffprivlib: the IBM differential "
            "privacy library, 2019",
            "@misc{diffprivlib,\n"
            "  author        = {Naoise Holohan and Stefano Braghin and P{\\'o}l Mac Aonghusa\n"
            "                   and Killian Levacher},\n"
            "  title         = {Diffprivlib: The {IBM} Differential Privacy Library},\n"
            "  year          = {2019},\n"
            "  eprint        = {1907.02444},\n"
            "  archivePrefix = {arXiv}\n"
            "}",
        ),
        Paper(
            "zhang2017",
            "Zhang, Cormode, Procopiuc, Srivastava & Xiao, PrivBayes: private data release "
            "via Bayesian networks, ACM TODS 2017 (SIGMOD 2014)",
            "@article{zhang2017,\n"
            "  author  = {Jun Zhang and Graham Cormode and Cecilia M. Procopiuc and\n"
            "             Divesh Srivastava and Xiaokui Xiao},\n"
            "  title   = {{PrivBayes}: Private Data Release via {Bayesian} Networks},\n"
            "  journal = {ACM Transactions on Database Systems},\n"
            "  volume  = {42},\n"
            "  number  = {4},\n"
            "  pages   = {25:1--25:41},\n"
            "  year    = {2017}\n"
            "}",
        ),
        Paper(
            "wang2013",
            "Wang & Wu, Preserving differential privacy in degree-correlation based graph "
            "generation (DP-dK), Transactions on Data Privacy 2013",
            "@article{wang2013,\n"
            "  author  = {Yue Wang and Xintao Wu},\n"
            "  title   = {Preserving Differential Privacy in Degree-Correlation based Graph\n"
            "             Generation},\n"
            "  journal = {Transactions on Data Privacy},\n"
            "  volume  = {6},\n"
            "  number  = {2},\n"
            "  year    = {2013}\n"
            "}",
        ),
        Paper(
            "nguyen2015",
            "Nguyen, Imine & Rusinowitch, Differentially private publication of social graphs "
            "at linear cost (TmF), ASONAM 2015",
            "@inproceedings{nguyen2015,\n"
            "  author    = {Hiep H. Nguyen and Abdessamad Imine and Micha{\\\"e}l Rusinowitch},\n"
            "  title     = {Differentially Private Publication of Social Graphs at Linear Cost},\n"
            "  booktitle = {IEEE/ACM International Conference on Advances in Social Networks\n"
            "               Analysis and Mining (ASONAM)},\n"
            "  year      = {2015}\n"
            "}",
        ),
        Paper(
            "mir2012",
            "Mir & Wright, A differentially private estimator for the stochastic Kronecker "
            "graph model (PrivSKG), EDBT/ICDT Workshops (PAIS) 2012",
            "@inproceedings{mir2012,\n"
            "  author    = {Darakhshan J. Mir and Rebecca N. Wright},\n"
            "  title     = {A Differentially Private Estimator for the Stochastic Kronecker\n"
            "               Graph Model},\n"
            "  booktitle = {Proceedings of the 2012 Joint EDBT/ICDT Workshops (PAIS)},\n"
            "  year      = {2012}\n"
            "}",
        ),
        Paper(
            "xiao2014",
            "Xiao, Chen & Tan, Differentially private network data release via structural "
            "inference (PrivHRG), KDD 2014",
            "@inproceedings{xiao2014,\n"
            "  author    = {Qian Xiao and Rui Chen and Kian-Lee Tan},\n"
            "  title     = {Differentially Private Network Data Release via Structural\n"
            "               Inference},\n"
            "  booktitle = {Proceedings of the 20th ACM SIGKDD International Conference on\n"
            "               Knowledge Discovery and Data Mining (KDD)},\n"
            "  year      = {2014}\n"
            "}",
        ),
        Paper(
            "yuan2023",
            "Yuan, Zhang, Du, Chen, Cheng & Sun, PrivGraph: differentially private graph data "
            "publication by exploiting community information, USENIX Security 2023",
            "@inproceedings{yuan2023,\n"
            "  author    = {Quan Yuan and Zhikun Zhang and Linkang Du and Min Chen and\n"
            "               Peng Cheng and Mingyang Sun},\n"
            "  title     = {{PrivGraph}: Differentially Private Graph Data Publication by\n"
            "               Exploiting Community Information},\n"
            "  booktitle = {32nd USENIX Security Symposium},\n"
            "  year      = {2023}\n"
            "}",
        ),
        Paper(
            "qin2017",
            "Qin, Yu, Yang, Khalil, Xiao & Ren, Generating synthetic decentralized social "
            "graphs with local differential privacy (LDPGen), CCS 2017",
            "@inproceedings{qin2017,\n"
            "  author    = {Zhan Qin and Ting Yu and Yin Yang and Issa Khalil and Xiaokui Xiao\n"
            "               and Kui Ren},\n"
            "  title     = {Generating Synthetic Decentralized Social Graphs with Local\n"
            "               Differential Privacy},\n"
            "  booktitle = {Proceedings of the 2017 ACM SIGSAC Conference on Computer and\n"
            "               Communications Security (CCS)},\n"
            "  year      = {2017}\n"
            "}",
        ),
        Paper(
            "mckenna2022",
            "McKenna, Mullins, Sheldon & Miklau, AIM: an adaptive and iterative mechanism for "
            "differentially private synthetic data, PVLDB 2022",
            "@article{mckenna2022,\n"
            "  author  = {Ryan McKenna and Brett Mullins and Daniel Sheldon and Gerome Miklau},\n"
            "  title   = {{AIM}: An Adaptive and Iterative Mechanism for Differentially Private\n"
            "             Synthetic Data},\n"
            "  journal = {Proceedings of the VLDB Endowment},\n"
            "  volume  = {15},\n"
            "  number  = {11},\n"
            "  year    = {2022}\n"
            "}",
        ),
        Paper(
            "mckenna2021",
            "McKenna, Miklau & Sheldon, Winning the NIST contest: a scalable and general "
            "approach to differentially private synthetic data (MST), JPC 2021",
            "@article{mckenna2021,\n"
            "  author  = {Ryan McKenna and Gerome Miklau and Daniel Sheldon},\n"
            "  title   = {Winning the {NIST} Contest: A scalable and general approach to\n"
            "             differentially private synthetic data},\n"
            "  journal = {Journal of Privacy and Confidentiality},\n"
            "  volume  = {11},\n"
            "  number  = {3},\n"
            "  year    = {2021}\n"
            "}",
        ),
    )
}


def paper_citation(key: str | None) -> str:
    """The one-line citation of ``key`` (a seed paper or a reference); the key itself for a
    paper privpub does not know."""
    paper = PAPERS.get(key or "") or REFERENCES.get(key or "")
    return paper.citation if paper else (key or "")
