"""privpub's one entry point (the same command as ``privpub run``).

    python run.py                                    # the embedded default comparison
    python run.py experiment=epasto2022_fig3c scale=paper
    python run.py -m experiment=epasto2022_fig3c dataset=sbm_epasto,adult_binary \
        mechanism.epsilon=0.5,2

See README.md and conf/config.yaml for every option; ``privpub list`` lists the experiments.
Exit codes: 0 done, 1 some trials failed, 2 config or data error (Hydra's own included),
130 interrupted (rerun the same command to resume). The app is privpub.experiments.app.
"""

from privpub.experiments.app import main

if __name__ == "__main__":
    main()
